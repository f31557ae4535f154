//! The downward API as the node answers it: a pod's and the node's fields a container reads
//! through a `fieldRef` ([`field_value`]), from what they may refer to besides the pod spec
//! ([`EnvSources`]) — in its environment and in downwardAPI volume files alike.

use k8s_openapi::api::core::v1::Pod;

use super::identity::PodIdentity;
use super::node::NodeContext;
use super::objects::PodObjects;

/// What an env value may refer to besides the pod spec: the node, the pod's IP once its
/// sandbox runs, and the config maps and secrets the sync step fetched.
pub struct EnvSources<'a> {
    pub pod: &'a Pod,
    pub id: &'a PodIdentity,
    pub node: &'a NodeContext,
    pub pod_ip: Option<&'a str>,
    pub objects: &'a PodObjects,
}

/// The value of a downward-API field path, when the node knows it (environment and
/// downwardAPI volumes alike).
pub fn field_value(sources: &EnvSources<'_>, path: &str) -> Option<String> {
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
