//! A container's environment: literal values with `$(VAR)` references to earlier variables,
//! and the `fieldRef`s the node can answer without the API server.

use std::collections::HashMap;

use sergeant_messages::pods::core::{Container, EnvVarSource, Pod};
use sergeant_messages::runtime::cri::KeyValue;

use super::error::SpecError;
use super::expand::expand;
use super::identity::PodIdentity;
use super::node::NodeContext;

/// What an env value may refer to besides the pod spec: the node, and the pod's IP once its
/// sandbox runs.
pub(crate) struct EnvSources<'a> {
    pub(crate) pod: &'a Pod,
    pub(crate) id: &'a PodIdentity,
    pub(crate) node: &'a NodeContext,
    pub(crate) pod_ip: Option<&'a str>,
}

/// The environment of `container` (at `field`, e.g. `spec.containers[0]`), in spec order; a
/// name given twice keeps its first place and its last value.
pub(crate) fn container_env(
    sources: &EnvSources<'_>,
    container: &Container,
    field: &str,
) -> Result<Vec<KeyValue>, SpecError> {
    let pod = &sources.id.display;
    if container.env_from.as_ref().is_some_and(|e| !e.is_empty()) {
        return Err(SpecError::field(
            pod,
            format!("{field}.envFrom"),
            "needs the API server (config maps and secrets), which sergeant does not use yet",
        ));
    }
    let mut env: Vec<KeyValue> = Vec::new();
    let mut values: HashMap<String, String> = HashMap::new();
    for (index, var) in container.env.iter().flatten().enumerate() {
        let value = match (&var.value_from, &var.value) {
            (Some(source), _) => {
                let at = format!("{field}.env[{index}].valueFrom");
                from_source(sources, source, &at)?
            }
            (None, value) => expand(value.as_deref().unwrap_or_default(), |name| {
                values.get(name).map(String::as_str)
            }),
        };
        values.insert(var.name.clone(), value.clone());
        match env.iter_mut().find(|kv| kv.key == var.name) {
            Some(existing) => existing.value = value,
            None => env.push(KeyValue {
                key: var.name.clone(),
                value,
            }),
        }
    }
    Ok(env)
}

fn from_source(
    sources: &EnvSources<'_>,
    source: &EnvVarSource,
    at: &str,
) -> Result<String, SpecError> {
    let pod = &sources.id.display;
    if let Some(field_ref) = &source.field_ref {
        return field_value(sources, &field_ref.field_path).ok_or_else(|| {
            SpecError::field(
                pod,
                format!("{at}.fieldRef.fieldPath"),
                unknown_field_reason(&field_ref.field_path),
            )
        });
    }
    let (kind, reason) = if source.config_map_key_ref.is_some() {
        (
            "configMapKeyRef",
            "needs the API server, which sergeant does not use yet",
        )
    } else if source.secret_key_ref.is_some() {
        (
            "secretKeyRef",
            "needs the API server, which sergeant does not use yet",
        )
    } else if source.resource_field_ref.is_some() {
        ("resourceFieldRef", "is not supported yet")
    } else if source.file_key_ref.is_some() {
        ("fileKeyRef", "is not supported yet")
    } else {
        return Err(SpecError::field(pod, at, "names no source"));
    };
    Err(SpecError::field(pod, format!("{at}.{kind}"), reason))
}

/// The value of a downward-API field path, when the node knows it.
fn field_value(sources: &EnvSources<'_>, path: &str) -> Option<String> {
    let meta = &sources.pod.metadata;
    let spec = sources.pod.spec.as_ref();
    let keyed = |prefix: &str| {
        path.strip_prefix(prefix)?
            .strip_suffix("']")
            .map(str::to_string)
    };
    for (prefix, map) in [
        ("metadata.labels['", &meta.labels),
        ("metadata.annotations['", &meta.annotations),
    ] {
        if let Some(key) = keyed(prefix) {
            return Some(
                map.as_ref()
                    .and_then(|m| m.get(&key))
                    .cloned()
                    .unwrap_or_default(),
            );
        }
    }
    match path {
        "metadata.name" => Some(sources.id.name.clone()),
        "metadata.namespace" => Some(sources.id.namespace.clone()),
        "metadata.uid" => Some(sources.id.uid.clone()),
        "spec.nodeName" => Some(
            spec.and_then(|s| s.node_name.clone())
                .unwrap_or_else(|| sources.node.node_name.clone()),
        ),
        "spec.serviceAccountName" => Some(
            spec.and_then(|s| s.service_account_name.clone())
                .unwrap_or_default(),
        ),
        "status.podIP" | "status.podIPs" => sources.pod_ip.map(str::to_string),
        "status.hostIP" | "status.hostIPs" => sources.node.node_ip.map(|ip| ip.to_string()),
        _ => None,
    }
}

fn unknown_field_reason(path: &str) -> String {
    match path {
        "status.podIP" | "status.podIPs" => {
            "the pod IP is not known yet (it is once the sandbox runs)".to_string()
        }
        "status.hostIP" | "status.hostIPs" => {
            "the node IP is not configured (--node-ip)".to_string()
        }
        _ if path.starts_with("metadata.labels[") || path.starts_with("metadata.annotations[") => {
            format!("{path:?} is not of the form metadata.labels['key']")
        }
        _ => {
            format!("{path:?} is not a field the node can supply (metadata.name, metadata.namespace, metadata.uid, metadata.labels['…'], metadata.annotations['…'], spec.nodeName, spec.serviceAccountName, status.podIP, status.hostIP)")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pod::spec::test_pods::{node, pod_with};
    use sergeant_messages::pods::core::{
        EnvFromSource, EnvVar, ObjectFieldSelector, SecretKeySelector,
    };
    use std::path::PathBuf;

    fn literal(name: &str, value: &str) -> EnvVar {
        EnvVar {
            name: name.into(),
            value: Some(value.into()),
            value_from: None,
        }
    }

    fn field(name: &str, path: &str) -> EnvVar {
        EnvVar {
            name: name.into(),
            value: None,
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector {
                    field_path: path.into(),
                    api_version: None,
                }),
                ..Default::default()
            }),
        }
    }

    fn run(env: Vec<EnvVar>, pod_ip: Option<&str>) -> Result<Vec<(String, String)>, SpecError> {
        let mut pod = pod_with(vec![], vec![]);
        pod.metadata.labels = Some([("app".to_string(), "web".to_string())].into());
        let id = PodIdentity::of(&pod).unwrap();
        let node = node(PathBuf::from("/tmp/x"));
        let sources = EnvSources {
            pod: &pod,
            id: &id,
            node: &node,
            pod_ip,
        };
        let container = Container {
            name: "c".into(),
            env: Some(env),
            ..Default::default()
        };
        Ok(container_env(&sources, &container, "spec.containers[0]")?
            .into_iter()
            .map(|kv| (kv.key, kv.value))
            .collect())
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn values_expand_earlier_variables_only() {
        let env = run(
            vec![
                literal("NAME", "world"),
                literal("GREETING", "hello $(NAME) $(LATER) $$(NAME)"),
                literal("LATER", "x"),
                literal("NAME", "again"),
            ],
            None,
        )
        .unwrap();
        assert_eq!(
            env,
            pairs(&[
                ("NAME", "again"),
                ("GREETING", "hello world $(LATER) $(NAME)"),
                ("LATER", "x")
            ])
        );
    }

    #[test]
    fn field_refs_the_node_knows() {
        let env = run(
            vec![
                field("N", "metadata.name"),
                field("NS", "metadata.namespace"),
                field("U", "metadata.uid"),
                field("NODE", "spec.nodeName"),
                field("APP", "metadata.labels['app']"),
                field("NONE", "metadata.annotations['x']"),
                field("IP", "status.podIP"),
                field("HOST", "status.hostIP"),
                literal("URL", "http://$(IP)/"),
            ],
            Some("10.88.0.5"),
        )
        .unwrap();
        assert_eq!(
            env,
            pairs(&[
                ("N", "web"),
                ("NS", "ns"),
                ("U", "uid-1"),
                ("NODE", "node-a"),
                ("APP", "web"),
                ("NONE", ""),
                ("IP", "10.88.0.5"),
                ("HOST", "192.0.2.1"),
                ("URL", "http://10.88.0.5/")
            ])
        );
    }

    #[test]
    fn what_the_node_cannot_answer_is_a_precise_error() {
        let error = run(vec![literal("A", "1"), field("IP", "status.podIP")], None).unwrap_err();
        assert_eq!(
            error.to_string(),
            "pod ns/web: spec.containers[0].env[1].valueFrom.fieldRef.fieldPath: the pod IP is not known yet (it is once the sandbox runs)"
        );
        let error = run(vec![field("X", "spec.bogus")], None).unwrap_err();
        assert!(
            error.to_string().contains("\"spec.bogus\" is not a field"),
            "{error}"
        );
        let secret = EnvVar {
            name: "S".into(),
            value: None,
            value_from: Some(EnvVarSource {
                secret_key_ref: Some(SecretKeySelector::default()),
                ..Default::default()
            }),
        };
        let error = run(vec![secret], None).unwrap_err().to_string();
        assert!(
            error
                .contains("spec.containers[0].env[0].valueFrom.secretKeyRef: needs the API server"),
            "{error}"
        );
    }

    #[test]
    fn env_from_needs_the_api_server() {
        let pod = pod_with(vec![], vec![]);
        let id = PodIdentity::of(&pod).unwrap();
        let node = node(PathBuf::from("/tmp/x"));
        let sources = EnvSources {
            pod: &pod,
            id: &id,
            node: &node,
            pod_ip: None,
        };
        let container = Container {
            name: "c".into(),
            env_from: Some(vec![EnvFromSource::default()]),
            ..Default::default()
        };
        let error = container_env(&sources, &container, "spec.containers[2]")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("spec.containers[2].envFrom: needs the API server"),
            "{error}"
        );
    }
}
