//! Who a pod is (name, namespace, UID) and where each of its containers sits in the spec,
//! read once with precise errors so every other part can name the pod and field at fault.

use k8s_openapi::api::core::v1::{Container, Pod};

use super::error::SpecError;

/// The namespace used when a pod names none, as the API server defaults it.
const DEFAULT_NAMESPACE: &str = "default";

/// A pod's identity as the runtime objects carry it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodIdentity {
    pub name: String,
    pub namespace: String,
    pub uid: String,
    /// `namespace/name`, for errors.
    pub display: String,
}

impl PodIdentity {
    /// Reads the identity of `pod`.
    pub fn of(pod: &Pod) -> Result<Self, SpecError> {
        let meta = &pod.metadata;
        let namespace = meta
            .namespace
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| DEFAULT_NAMESPACE.to_string());
        let name = meta.name.clone().unwrap_or_default();
        let display = format!("{namespace}/{name}");
        if name.is_empty() {
            return Err(SpecError::field(&display, "metadata.name", "is missing"));
        }
        let uid = meta.uid.clone().unwrap_or_default();
        if !is_safe_path_component(&uid) {
            return Err(SpecError::field(
                &display,
                "metadata.uid",
                format!("{uid:?} is missing or not usable as a directory name"),
            ));
        }
        Ok(PodIdentity {
            name,
            namespace,
            uid,
            display,
        })
    }
}

/// Whether `text` can be one component of a host path without escaping its parent.
pub fn is_safe_path_component(text: &str) -> bool {
    !text.is_empty() && text != "." && text != ".." && !text.contains(['/', '\0'])
}

/// Every container of the pod with its field path: init containers (sidecars among them) in
/// order, then the regular ones.
pub fn all_containers(pod: &Pod) -> impl Iterator<Item = (String, &Container)> {
    let spec = pod.spec.as_ref();
    let init = spec
        .and_then(|s| s.init_containers.as_deref())
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("spec.initContainers[{i}]"), c));
    let regular = spec
        .map(|s| s.containers.as_slice())
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("spec.containers[{i}]"), c));
    init.chain(regular)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn pod(name: Option<&str>, namespace: Option<&str>, uid: Option<&str>) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: name.map(Into::into),
                namespace: namespace.map(Into::into),
                uid: uid.map(Into::into),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn identity_defaults_the_namespace() {
        let id = PodIdentity::of(&pod(Some("web"), None, Some("u-1"))).unwrap();
        assert_eq!(id.namespace, "default");
        assert_eq!(id.display, "default/web");
    }

    #[test]
    fn a_missing_name_or_bad_uid_is_refused() {
        let error = PodIdentity::of(&pod(None, Some("ns"), Some("u"))).unwrap_err();
        assert_eq!(error.to_string(), "pod ns/: metadata.name: is missing");
        for uid in [None, Some(""), Some(".."), Some("a/b")] {
            let error = PodIdentity::of(&pod(Some("p"), Some("ns"), uid)).unwrap_err();
            assert!(error.to_string().contains("metadata.uid"), "{error}");
        }
    }
}
