//! One manifest file's text → one `Pod`, strictly: YAML or JSON, exactly one document,
//! `apiVersion: v1` and `kind: Pod`, every field known to the pod type and of the right type.
//! k8s-openapi ignores unknown fields, so they are found by comparing the keys written in the
//! file with the keys of the pod serialized back: whatever did not survive the round trip was
//! not understood. Before any parser builds a tree, the text's shape is read once
//! ([`outline`]): too deep a nesting or too far-reaching aliases are refused there, at a cost
//! linear in the text, and the same pass indexes the lines errors point at.

use k8s_openapi::api::core::v1::Pod;
use serde::Deserialize;
use serde_json::Value;

use super::fields::known_fields;
use crate::located::outline::outline;
use crate::located::{FieldPath, Manifest, ManifestError, Segment};
use crate::names::quoted;
use crate::names::MAX_QUOTED_CHARS;

/// The only `apiVersion` and `kind` a static pod manifest may have.
const API_VERSION: &str = "v1";
const KIND: &str = "Pod";

/// Parses the manifest's text into a pod, checking its header, field names and types.
///
/// # Errors
/// The first problem found, naming the file, line, field and reason.
pub(crate) fn parse(manifest: &Manifest<'_>) -> Result<Pod, ManifestError> {
    let index = outline(manifest.text).map_err(|e| manifest.error_at(e.line(), e.to_string()))?;
    manifest.set_index(index);
    let tree = read_tree(manifest)?;
    check_header(manifest, &tree)?;
    let pod: Pod = serde_path_to_error::deserialize(&tree).map_err(|e| type_error(manifest, e))?;
    let echo = serde_json::to_value(&pod)
        .map_err(|e| manifest.error_at(manifest.first_line(), format!("cannot re-encode: {e}")))?;
    let mut unknown = Vec::new();
    unknown_fields(&tree, &echo, &FieldPath::default(), &mut unknown);
    let first = unknown
        .into_iter()
        .min_by_key(|path| manifest.line_of(path));
    match first {
        Some(path) => Err(unknown_field(manifest, path)),
        None => Ok(pod),
    }
}

/// The manifest as a generic tree: JSON when it starts with `{`, YAML otherwise.
fn read_tree(manifest: &Manifest<'_>) -> Result<Value, ManifestError> {
    if manifest.text.trim_start().starts_with('{') {
        return serde_json::from_str(manifest.text)
            .map_err(|e| manifest.error_at(e.line().max(1), json_reason(&e)));
    }
    let mut documents = Vec::new();
    for document in serde_yaml::Deserializer::from_str(manifest.text) {
        let value = Value::deserialize(document).map_err(|e| yaml_error(manifest, &e))?;
        if !value.is_null() {
            documents.push(value);
        }
    }
    if documents.len() > 1 {
        return Err(manifest.error_at(
            second_document_line(manifest.text),
            "more than one YAML document: a static pod file holds exactly one pod",
        ));
    }
    documents
        .pop()
        .ok_or_else(|| manifest.error_at(1, "the file is empty: expected one Pod"))
}

fn yaml_error(manifest: &Manifest<'_>, error: &serde_yaml::Error) -> ManifestError {
    let line = error.location().map_or(1, |at| at.line());
    let message = error.to_string();
    let message = match error.location() {
        Some(at) => message.replacen(
            &format!(" at line {} column {}", at.line(), at.column()),
            "",
            1,
        ),
        None => message,
    };
    manifest.error_at(
        line,
        format!("not valid YAML: {}", sergeant_config::reword(&message)),
    )
}

fn json_reason(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let message = message
        .rsplit_once(" at line ")
        .map_or(message.as_str(), |(reason, _)| reason);
    format!("not valid JSON: {}", sergeant_config::reword(message))
}

/// The line of the `---` marker that starts a second document with content.
fn second_document_line(text: &str) -> usize {
    let mut seen_content = false;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.starts_with("---") && seen_content {
            return index + 1;
        }
        seen_content |=
            !trimmed.is_empty() && !trimmed.starts_with('#') && !trimmed.starts_with("---");
    }
    1
}

fn check_header(manifest: &Manifest<'_>, tree: &Value) -> Result<(), ManifestError> {
    let Some(object) = tree.as_object() else {
        return Err(manifest.error_at(
            manifest.first_line(),
            "a manifest must be a mapping with apiVersion: v1 and kind: Pod",
        ));
    };
    for (key, expected) in [("apiVersion", API_VERSION), ("kind", KIND)] {
        match object.get(key) {
            Some(Value::String(found)) if found == expected => {}
            Some(found) => {
                return Err(manifest.error(
                    &FieldPath::of(&[key]),
                    format!(
                        "unsupported value {found}: a static pod manifest needs \"{expected}\""
                    ),
                ))
            }
            None => {
                return Err(manifest.error(
                    &FieldPath::of(&[key]),
                    format!("required: a static pod manifest needs {key}: {expected}"),
                ))
            }
        }
    }
    Ok(())
}

/// A value of the wrong type, named by its path.
fn type_error(
    manifest: &Manifest<'_>,
    error: serde_path_to_error::Error<serde_json::Error>,
) -> ManifestError {
    let mut path = FieldPath::default();
    for segment in error.path().iter() {
        match segment {
            serde_path_to_error::Segment::Seq { index } => path.push(Segment::Index(*index)),
            serde_path_to_error::Segment::Map { key } => path.push(Segment::Key(key.clone())),
            serde_path_to_error::Segment::Enum { variant } => {
                path.push(Segment::Key(variant.clone()));
            }
            serde_path_to_error::Segment::Unknown => break,
        }
    }
    // k8s-openapi fills absent required fields with their zero value, so type errors are the
    // only ones it raises; validation catches the zero values.
    manifest.error(
        &path,
        sergeant_config::reword(&error.into_inner().to_string()),
    )
}

/// Collects the paths of keys written in `input` that are absent from `echo` (the pod
/// serialized back). Keys whose value is `null` are skipped: they carry nothing, and an unset
/// optional field is never serialized back.
fn unknown_fields(input: &Value, echo: &Value, path: &FieldPath, out: &mut Vec<FieldPath>) {
    match (input, echo) {
        (Value::Object(written), Value::Object(understood)) => {
            for (key, value) in written {
                if value.is_null() {
                    continue;
                }
                match understood.get(key) {
                    Some(echoed) => unknown_fields(value, echoed, &path.key(key), out),
                    None => out.push(path.key(key)),
                }
            }
        }
        (Value::Array(written), Value::Array(understood)) => {
            for (index, (value, echoed)) in written.iter().zip(understood).enumerate() {
                unknown_fields(value, echoed, &path.index(index), out);
            }
        }
        _ => {}
    }
}

fn unknown_field(manifest: &Manifest<'_>, path: FieldPath) -> ManifestError {
    let segments = path.segments();
    let (name, parent) = match segments.split_last() {
        Some((Segment::Key(name), parent)) => (name.clone(), parent),
        _ => (String::new(), segments),
    };
    let mut parent_path = FieldPath::default();
    for segment in parent {
        parent_path.push(segment.clone());
    }
    // No field's name is long: a long one is not compared (the comparison costs its length
    // times each candidate's).
    let close = (name.len() <= MAX_QUOTED_CHARS)
        .then(|| sergeant_config::suggest(&name, known_fields(&parent_path)))
        .flatten();
    let reason = match close {
        Some(close) => format!(
            "unknown field {} (did you mean \"{close}\"?)",
            quoted(&name)
        ),
        None => format!("unknown field {}", quoted(&name)),
    };
    manifest.error(&path, reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<Pod, ManifestError> {
        parse(&Manifest::new("/etc/kubernetes/manifests/web.yaml", text))
    }

    fn problem(text: &str) -> (usize, Option<String>, String) {
        match parse_text(text) {
            Ok(pod) => panic!("accepted: {pod:?}"),
            Err(e) => (e.line, e.field, e.reason),
        }
    }

    const GOOD: &str = "\
apiVersion: v1
kind: Pod
metadata:
  name: web
  creationTimestamp: null
spec:
  containers:
  - name: nginx
    image: nginx:1.27
    ports:
    - containerPort: 80
    resources:
      limits:
        cpu: 1
        memory: 64Mi
";

    #[test]
    fn parses_yaml() {
        let pod = parse_text(GOOD).unwrap();
        assert_eq!(pod.metadata.name.as_deref(), Some("web"));
        let spec = pod.spec.unwrap();
        assert_eq!(spec.containers[0].image.as_deref(), Some("nginx:1.27"));
    }

    #[test]
    fn parses_json() {
        let text = r#"{
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {"name": "web"},
  "spec": {"containers": [{"name": "a", "image": "busybox"}]}
}"#;
        let pod = parse_text(text).unwrap();
        assert_eq!(pod.metadata.name.as_deref(), Some("web"));
    }

    #[test]
    fn json_errors_point_at_the_item() {
        let text = r#"{
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {"name": "web"},
  "spec": {
    "containers": [
      {
        "name": "a",
        "image": "busybox"
      },
      {
        "name": "b",
        "image": "busybox",
        "ports": [{"containerPort": "http"}]
      }
    ]
  }
}"#;
        assert_eq!(
            problem(text),
            (
                14,
                Some("spec.containers[1].ports[0].containerPort".into()),
                "invalid type: string \"http\", expected an integer".into()
            )
        );
    }

    #[test]
    fn unknown_field_with_suggestion() {
        let text = GOOD.replace("    image: nginx:1.27", "    imagee: nginx:1.27");
        assert_eq!(
            problem(&text),
            (
                9,
                Some("spec.containers[0].imagee".into()),
                "unknown field \"imagee\" (did you mean \"image\"?)".into()
            )
        );
    }

    #[test]
    fn unknown_field_in_second_item_and_without_suggestion() {
        let text = format!("{GOOD}  - name: side\n    image: busybox\n    wibble: 1\n");
        assert_eq!(
            problem(&text),
            (
                18,
                Some("spec.containers[1].wibble".into()),
                "unknown field \"wibble\"".into()
            )
        );
    }

    #[test]
    fn first_unknown_field_in_file_order() {
        let text = GOOD
            .replace("  name: web", "  name: web\n  zzz: 1")
            .replace(
                "    - containerPort: 80",
                "    - containerPort: 80\n      aaa: 2",
            );
        let (line, field, _) = problem(&text);
        assert_eq!((line, field.as_deref()), (5, Some("metadata.zzz")));
    }

    #[test]
    fn wrong_type_names_the_field() {
        let text = GOOD.replace("containerPort: 80", "containerPort: eighty");
        assert_eq!(
            problem(&text),
            (
                11,
                Some("spec.containers[0].ports[0].containerPort".into()),
                "invalid type: string \"eighty\", expected an integer".into()
            )
        );
    }

    #[test]
    fn wrong_kind_and_missing_api_version() {
        let text = GOOD.replace("kind: Pod", "kind: Deployment");
        assert_eq!(
            problem(&text),
            (
                2,
                Some("kind".into()),
                "unsupported value \"Deployment\": a static pod manifest needs \"Pod\"".into()
            )
        );
        let text = GOOD.replace("apiVersion: v1\n", "");
        let (line, field, reason) = problem(&text);
        assert_eq!((line, field.as_deref()), (1, Some("apiVersion")));
        assert!(reason.starts_with("required"), "{reason}");
    }

    #[test]
    fn syntax_error_has_its_line() {
        let text = GOOD.replace("    image: nginx:1.27", "    image: [nginx");
        let error = parse_text(&text).unwrap_err();
        assert_eq!(error.field, None);
        assert!(error.line >= 9, "{error}");
        assert!(error.reason.starts_with("not valid YAML"), "{error}");
    }

    #[test]
    fn two_documents_are_refused() {
        let text = format!("{GOOD}---\n{GOOD}");
        assert_eq!(
            problem(&text),
            (
                16,
                None,
                "more than one YAML document: a static pod file holds exactly one pod".into()
            )
        );
    }

    #[test]
    fn empty_file_is_refused() {
        assert_eq!(
            problem("# nothing here\n"),
            (1, None, "the file is empty: expected one Pod".into())
        );
    }

    #[test]
    fn rendered_error_is_one_line() {
        let text = GOOD.replace("    image: nginx:1.27", "    imagee: nginx:1.27");
        assert_eq!(
            parse_text(&text).unwrap_err().to_string(),
            "/etc/kubernetes/manifests/web.yaml:9: spec.containers[0].imagee: \
             unknown field \"imagee\" (did you mean \"image\"?)"
        );
    }

    /// How long parsing a file of `depth` nested flow lists under `spec:` takes, and its error.
    fn deep(depth: usize) -> (std::time::Duration, ManifestError) {
        let text = format!(
            "apiVersion: v1\nkind: Pod\nspec: {}{}\n",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let started = std::time::Instant::now();
        let error = parse_text(&text).unwrap_err();
        (started.elapsed(), error)
    }

    /// A file of 200 000 nested flow lists took minutes: libyaml's scanner costs the flow
    /// depth on every token. It is now refused at the first level too deep, in a time that
    /// does not grow with the depth.
    #[test]
    fn a_deeply_nested_file_is_refused_quickly_and_linearly() {
        let (small, _) = deep(50_000);
        let (large, error) = deep(200_000);
        eprintln!("depth 50 000: {small:?}; depth 200 000: {large:?}");
        assert_eq!(
            (error.line, error.field, error.reason.as_str()),
            (
                3,
                None,
                "nested more than 64 levels deep: no pod is this deep"
            )
        );
        assert!(large < std::time::Duration::from_secs(2), "{large:?}");
        // Linear at worst: four times the depth may not cost more than four times as much
        // (plus a margin for a loaded machine's noise on times this short).
        let margin = std::time::Duration::from_millis(50);
        assert!(large <= small * 4 + margin, "{small:?} then {large:?}");
    }

    #[test]
    fn deep_json_is_refused_the_same_way() {
        let depth = 100_000;
        let text = format!("{}{}", "{\"a\":".repeat(depth), "}".repeat(depth));
        let error = parse_text(&text).unwrap_err();
        assert_eq!(error.line, 1);
        assert!(error.reason.starts_with("nested more than 64"), "{error}");
    }

    #[test]
    fn an_alias_bomb_is_refused_before_it_expands() {
        let mut text = String::from("apiVersion: v1\nkind: Pod\nmetadata:\n  annotations:\n");
        text.push_str(&format!("    a0: &a0 \"{}\"\n", "x".repeat(100)));
        for level in 1..40 {
            let previous = level - 1;
            text.push_str(&format!(
                "    a{level}: &a{level} [*a{previous}, *a{previous}, *a{previous}, *a{previous}]\n"
            ));
        }
        let started = std::time::Instant::now();
        let error = parse_text(&text).unwrap_err();
        assert!(error.reason.contains("aliases expand it past"), "{error}");
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn a_long_unknown_field_is_named_clipped_without_a_suggestion() {
        let long = "q".repeat(100_000);
        let text = GOOD.replace("    image: nginx:1.27", &format!("    ? {long}\n    : 1"));
        let error = parse_text(&text).unwrap_err();
        assert!(error.reason.starts_with("unknown field \"qqqq"), "{error}");
        assert!(error.reason.ends_with("(100000 bytes)"), "{error}");
        assert!(error.to_string().len() < 300);
    }
}
