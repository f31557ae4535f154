//! The pod's metadata as upstream's object-meta validation checks it: the name an RFC 1123
//! subdomain (with the node suffix, for a static pod), the namespace an RFC 1123 label, every
//! label key a qualified name and value a label value, every annotation key a qualified name
//! and the annotations at most 256 KiB together. Entry point: `Checks::metadata`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;

use super::{Checks, Origin};
use crate::limits::{MAX_ANNOTATIONS_BYTES, MAX_LABELS};
use crate::located::FieldPath;
use crate::names::{label_problem, label_value_problem, qualified_name_problem, subdomain_problem};

impl Checks<'_, '_> {
    pub(super) fn metadata(&mut self, pod: &Pod, origin: Origin<'_>) {
        let path = FieldPath::of(&["metadata", "name"]);
        match (pod.metadata.name.as_deref(), origin) {
            (None | Some(""), Origin::StaticPod { .. }) => {
                self.fail(&path, "required: a static pod needs a name");
            }
            (None | Some(""), Origin::Api) => self.fail(&path, "required: a pod needs a name"),
            (Some(name), origin) => {
                if let Some(reason) = subdomain_problem(name) {
                    self.fail(&path, reason);
                } else if let Origin::StaticPod { node } = origin {
                    if let Some(reason) = subdomain_problem(&format!("{name}-{node}")) {
                        self.fail(&path, format!("with the node name suffix, {reason}"));
                    }
                }
            }
        }
        if let Some(namespace) = pod.metadata.namespace.as_deref() {
            if let Some(reason) = label_problem(namespace) {
                self.fail(&FieldPath::of(&["metadata", "namespace"]), reason);
            }
        }
        if let Some(labels) = &pod.metadata.labels {
            self.labels(labels);
        }
        if let Some(annotations) = &pod.metadata.annotations {
            self.annotations(annotations);
        }
    }

    fn labels(&mut self, labels: &BTreeMap<String, String>) {
        let path = FieldPath::of(&["metadata", "labels"]);
        if !self.at_most(&path, labels.len(), MAX_LABELS, "labels") {
            return;
        }
        for (key, value) in labels {
            let label = path.key(key);
            if let Some(reason) = qualified_name_problem(key) {
                self.fail(&label, format!("invalid key: {reason}"));
            }
            if let Some(reason) = label_value_problem(value) {
                self.fail(&label, format!("invalid value: {reason}"));
            }
        }
    }

    fn annotations(&mut self, annotations: &BTreeMap<String, String>) {
        let path = FieldPath::of(&["metadata", "annotations"]);
        let total = annotations.iter().fold(0usize, |sum, (k, v)| {
            sum.saturating_add(k.len()).saturating_add(v.len())
        });
        if total > MAX_ANNOTATIONS_BYTES {
            self.fail(
                &path,
                format!(
                    "{total} bytes of annotations (keys and values), more than the \
                     {MAX_ANNOTATIONS_BYTES} (256 KiB) a pod may have"
                ),
            );
            return;
        }
        for key in annotations.keys() {
            // Upstream checks annotation keys in lower case: capitals are allowed anywhere.
            if let Some(reason) = qualified_name_problem(&key.to_ascii_lowercase()) {
                self.fail(&path.key(key), format!("invalid key: {reason}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::limits::MAX_ANNOTATIONS_BYTES;
    use crate::validate::tests::problems;

    fn pod(metadata: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n{metadata}spec:\n  containers:\n  - name: a\n    image: busybox\n"
        )
    }

    #[test]
    fn good_labels_and_annotations_pass() {
        let text = pod("  labels:\n    app: web\n    example.com/Tier: Front_1\n    empty: \"\"\n  annotations:\n    Example.com/Note: \"any text at all: {}\"\n");
        assert!(problems(&text).is_empty(), "{:?}", problems(&text));
    }

    #[test]
    fn a_bad_label_key_and_a_long_value_are_both_named() {
        let value = "v".repeat(300);
        let text = pod(&format!("  labels:\n    \"a b/c d\": {value}\n"));
        let found = problems(&text);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].0, 6);
        assert_eq!(found[0].1, "metadata.labels.a b/c d");
        assert!(
            found[0]
                .2
                .starts_with("invalid key: the prefix of \"a b/c d\""),
            "{found:?}"
        );
        assert!(found[1].2.starts_with("invalid value: \"vvvv"), "{found:?}");
        assert!(
            found[1].2.ends_with("must be no more than 63 characters"),
            "{found:?}"
        );
    }

    #[test]
    fn labels_past_the_count_bound_are_refused_as_a_whole() {
        let mut labels = String::from("  labels:\n");
        for n in 0..1025 {
            labels.push_str(&format!("    k{n}: v\n"));
        }
        assert_eq!(
            problems(&pod(&labels)),
            [(
                5,
                "metadata.labels".to_owned(),
                "1025 labels, more than the 1024 sergeant accepts".to_owned()
            )]
        );
        let fits: String = labels
            .lines()
            .take(1025)
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(problems(&pod(&fits)).is_empty());
    }

    /// Annotations may total 262144 bytes of keys and values, and not one more.
    #[test]
    fn annotations_at_and_past_the_size_limit() {
        let text = |total: usize| {
            let value = "x".repeat(total - 1);
            pod(&format!("  annotations:\n    a: {value}\n"))
        };
        assert!(problems(&text(MAX_ANNOTATIONS_BYTES)).is_empty());
        assert_eq!(
            problems(&text(MAX_ANNOTATIONS_BYTES + 1)),
            [(
                5,
                "metadata.annotations".to_owned(),
                "262145 bytes of annotations (keys and values), more than the 262144 (256 KiB) \
                 a pod may have"
                    .to_owned()
            )]
        );
    }

    #[test]
    fn annotation_keys_are_qualified_names() {
        let text = pod("  annotations:\n    ok/fine: x\n    \"no good\": x\n");
        let found = problems(&text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            (found[0].0, found[0].1.as_str()),
            (7, "metadata.annotations.no good")
        );
    }
}
