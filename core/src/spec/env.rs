//! A container's environment: `envFrom` config maps and secrets, then `env` — literal values
//! with `$(VAR)` references to earlier variables and service variables, keys of config maps
//! and secrets, and the `fieldRef`s the node answers itself — then the service variables
//! ([`super::service_env`]) the container does not set itself.

use std::collections::HashMap;

use k8s_cri::v1::KeyValue;
use k8s_openapi::api::core::v1::{Container, EnvVarSource};

use super::env_refs::{env_from, key_value};
use super::expand::expand;
use super::service_env::service_env;
use crate::context::{field_value, resource_value, EnvSources, ObjectKind, SpecError};

/// The environment of `container` (at `field`, e.g. `spec.containers[0]`): the `envFrom`
/// variables, then `env` in spec order; a name given twice keeps its first place and its last
/// value. A variable from a missing optional key or object is left out. Then the variables of
/// the services the pod links to, those the container sets itself left out, as upstream.
///
/// # Errors
///
/// [`SpecError::Field`] naming the reference the node cannot answer, or
/// `spec.enableServiceLinks` when the services could not be listed.
pub fn container_env(
    sources: &EnvSources<'_>,
    container: &Container,
    field: &str,
) -> Result<Vec<KeyValue>, SpecError> {
    let pod = &sources.id.display;
    let mut env: Vec<KeyValue> = Vec::new();
    let mut values: HashMap<String, String> = HashMap::new();
    let mut set = |key: String, value: String, values: &mut HashMap<String, String>| {
        values.insert(key.clone(), value.clone());
        match env.iter_mut().find(|kv| kv.key == key) {
            Some(existing) => existing.value = value,
            None => env.push(KeyValue { key, value }),
        }
    };
    for (index, source) in container.env_from.iter().flatten().enumerate() {
        let vars = env_from(sources.objects, source).map_err(|error| {
            let at = error.field();
            let dot = if at.is_empty() { "" } else { "." };
            SpecError::field(
                pod,
                format!("{field}.envFrom[{index}]{dot}{at}"),
                error.to_string(),
            )
        })?;
        for (key, value) in vars {
            set(key, value, &mut values);
        }
    }
    let services = sources
        .objects
        .services()
        .map_err(|error| SpecError::field(pod, "spec.enableServiceLinks", error.to_string()))?;
    let service_vars = service_env(services);
    let service_values: HashMap<&str, &str> = service_vars
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    for (index, var) in container.env.iter().flatten().enumerate() {
        let value = match (&var.value_from, &var.value) {
            (Some(source), _) => {
                let at = format!("{field}.env[{index}].valueFrom");
                match from_source(sources, &container.name, source, &at)? {
                    Some(value) => value,
                    None => continue,
                }
            }
            (None, value) => expand(value.as_deref().unwrap_or_default(), |name| {
                values
                    .get(name)
                    .map(String::as_str)
                    .or_else(|| service_values.get(name).copied())
            }),
        };
        set(var.name.clone(), value, &mut values);
    }
    for (key, value) in service_vars {
        if !values.contains_key(&key) {
            env.push(KeyValue { key, value });
        }
    }
    Ok(env)
}

/// The value of one `valueFrom` of container `own`; `None` for a missing optional key.
fn from_source(
    sources: &EnvSources<'_>,
    own: &str,
    source: &EnvVarSource,
    at: &str,
) -> Result<Option<String>, SpecError> {
    let pod = &sources.id.display;
    if let Some(field_ref) = &source.field_ref {
        return field_value(sources, &field_ref.field_path)
            .map(Some)
            .ok_or_else(|| {
                SpecError::field(
                    pod,
                    format!("{at}.fieldRef.fieldPath"),
                    unknown_field_reason(&field_ref.field_path),
                )
            });
    }
    let keyed = match (&source.config_map_key_ref, &source.secret_key_ref) {
        (Some(r), _) => Some((
            ObjectKind::ConfigMap,
            "configMapKeyRef",
            &r.name,
            &r.key,
            r.optional,
        )),
        (None, Some(r)) => Some((
            ObjectKind::Secret,
            "secretKeyRef",
            &r.name,
            &r.key,
            r.optional,
        )),
        (None, None) => None,
    };
    if let Some((kind, field, name, key, optional)) = keyed {
        let namespace = &sources.id.namespace;
        return key_value(
            sources.objects,
            kind,
            name,
            key,
            optional.unwrap_or(false),
            namespace,
        )
        .map_err(|error| SpecError::field(pod, format!("{at}.{field}"), error.to_string()));
    }
    if let Some(selector) = &source.resource_field_ref {
        return resource_value(sources.pod, own, selector, sources.node)
            .map(Some)
            .map_err(|error| {
                SpecError::field(pod, format!("{at}.resourceFieldRef"), error.to_string())
            });
    }
    if source.file_key_ref.is_some() {
        return Err(SpecError::field(
            pod,
            format!("{at}.fileKeyRef"),
            "is not supported yet",
        ));
    }
    Err(SpecError::field(pod, at, "names no source"))
}

fn unknown_field_reason(path: &str) -> String {
    match path {
        "status.podIP" | "status.podIPs" => {
            "the pod IP is not known yet (it is once the sandbox runs)".to_string()
        }
        "status.hostIP" | "status.hostIPs" => {
            "the node has no address (no --node-ip and no default route)".to_string()
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
    use crate::context::{PodIdentity, PodObjects};
    use crate::testing::{node, pod_with};
    use k8s_openapi::api::core::v1::{
        ConfigMapEnvSource, ConfigMapKeySelector, EnvFromSource, EnvVar, ObjectFieldSelector,
        SecretKeySelector,
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
        let objects = objects();
        let sources = EnvSources {
            pod: &pod,
            id: &id,
            node: &node,
            pod_ip,
            objects: &objects,
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
            error.contains(
                "spec.containers[0].env[0].valueFrom.secretKeyRef: secret \"\" was not fetched"
            ),
            "{error}"
        );
    }

    /// The managed objects of these tests: config map `cm` {A: 1, B: 2}, secret `gone`
    /// missing.
    fn objects() -> PodObjects {
        let mut objects = PodObjects::managed();
        let data = [("A", "1"), ("B", "2")]
            .map(|(k, v)| (k.to_owned(), v.as_bytes().to_vec()))
            .into();
        objects.insert(ObjectKind::ConfigMap, "cm", Some(data));
        objects.insert(ObjectKind::Secret, "gone", None);
        objects
    }

    fn env_from_run(
        objects: &PodObjects,
        env_from: Vec<EnvFromSource>,
        env: Vec<EnvVar>,
    ) -> Result<Vec<(String, String)>, SpecError> {
        let pod = pod_with(vec![], vec![]);
        let id = PodIdentity::of(&pod).unwrap();
        let node = node(PathBuf::from("/tmp/x"));
        let sources = EnvSources {
            pod: &pod,
            id: &id,
            node: &node,
            pod_ip: None,
            objects,
        };
        let container = Container {
            name: "c".into(),
            env_from: Some(env_from),
            env: Some(env),
            ..Default::default()
        };
        Ok(container_env(&sources, &container, "spec.containers[2]")?
            .into_iter()
            .map(|kv| (kv.key, kv.value))
            .collect())
    }

    fn from_cm(name: &str) -> EnvFromSource {
        EnvFromSource {
            config_map_ref: Some(ConfigMapEnvSource {
                name: name.into(),
                optional: None,
            }),
            ..Default::default()
        }
    }

    fn key_ref(name: &str, cm: &str, key: &str, optional: bool) -> EnvVar {
        EnvVar {
            name: name.into(),
            value: None,
            value_from: Some(EnvVarSource {
                config_map_key_ref: Some(ConfigMapKeySelector {
                    name: cm.into(),
                    key: key.into(),
                    optional: Some(optional),
                }),
                ..Default::default()
            }),
        }
    }

    #[test]
    fn config_maps_and_secrets_fill_the_environment() {
        let env = env_from_run(
            &objects(),
            vec![from_cm("cm")],
            vec![
                literal("B", "own"),
                key_ref("K", "cm", "A", false),
                key_ref("SKIPPED", "cm", "nope", true),
                literal("REF", "$(A)-$(K)"),
            ],
        )
        .unwrap();
        assert_eq!(
            env,
            pairs(&[("A", "1"), ("B", "own"), ("K", "1"), ("REF", "1-1")])
        );
        let error = env_from_run(&objects(), vec![], vec![key_ref("K", "cm", "nope", false)])
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "pod ns/web: spec.containers[2].env[0].valueFrom.configMapKeyRef: couldn't find key nope in ConfigMap ns/cm"
        );
        let error = env_from_run(&objects(), vec![from_cm("other")], vec![])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("envFrom[0].configMapRef: configmap \"other\" was not fetched"),
            "{error}"
        );
    }

    #[test]
    fn a_standalone_node_has_no_config_maps() {
        let error = env_from_run(&PodObjects::default(), vec![from_cm("cm")], vec![])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("spec.containers[2].envFrom[0].configMapRef: needs the API server"),
            "{error}"
        );
    }

    #[test]
    fn service_variables_come_last_expand_and_yield_to_the_containers_own() {
        use crate::spec::{LinkedPort, LinkedService};
        let mut objects = objects();
        objects.insert_services(Ok(vec![LinkedService {
            name: "web".into(),
            cluster_ip: "10.96.0.7".into(),
            ports: vec![LinkedPort {
                name: String::new(),
                port: 80,
                protocol: "TCP".into(),
            }],
        }]));
        let env = env_from_run(
            &objects,
            vec![],
            vec![
                literal("URL", "http://$(WEB_SERVICE_HOST)/"),
                literal("WEB_SERVICE_PORT", "8080"),
            ],
        )
        .unwrap();
        let keys: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "URL",
                "WEB_SERVICE_PORT",
                "WEB_SERVICE_HOST",
                "WEB_PORT",
                "WEB_PORT_80_TCP",
                "WEB_PORT_80_TCP_PROTO",
                "WEB_PORT_80_TCP_PORT",
                "WEB_PORT_80_TCP_ADDR"
            ]
        );
        assert_eq!(env[0].1, "http://10.96.0.7/");
        assert_eq!(env[1].1, "8080", "the container's own value wins");

        objects.insert_services(Err(crate::spec::ObjectError::Api {
            request: crate::spec::ApiRequest::ListServices {
                namespace: "ns".into(),
            },
            failure: crate::spec::ApiFailure {
                kind: crate::spec::ApiFailureKind::Unreachable,
                message: "refused".into(),
            },
        }));
        let error = env_from_run(&objects, vec![], vec![])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("spec.enableServiceLinks: listing the services"),
            "{error}"
        );
    }
}
