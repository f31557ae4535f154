//! The mirror pod of a static pod, as upstream's mirror client makes it: the same name,
//! namespace, labels, annotations and spec, plus the `kubernetes.io/config.mirror` annotation
//! holding the static pod's hash, owned by this node's Node (so it goes when the Node does).

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use crate::source::{static_hash, CONFIG_MIRROR};

/// The mirror pod of `static_pod`, owned by the Node `node` whose UID is `node_uid`.
#[must_use]
pub fn mirror_of(static_pod: &Pod, node: &str, node_uid: &str) -> Pod {
    let meta = &static_pod.metadata;
    let mut annotations = meta.annotations.clone().unwrap_or_default();
    let hash = static_hash(static_pod).unwrap_or_default().to_owned();
    annotations.insert(CONFIG_MIRROR.to_owned(), hash);
    Pod {
        metadata: ObjectMeta {
            name: meta.name.clone(),
            namespace: meta.namespace.clone(),
            labels: meta.labels.clone(),
            annotations: Some(annotations),
            owner_references: Some(vec![OwnerReference {
                api_version: "v1".to_owned(),
                kind: "Node".to_owned(),
                name: node.to_owned(),
                uid: node_uid.to_owned(),
                controller: Some(true),
                ..OwnerReference::default()
            }]),
            ..ObjectMeta::default()
        },
        spec: static_pod.spec.clone(),
        status: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{is_static_pod, mirror_hash, CONFIG_HASH, CONFIG_SOURCE};

    #[test]
    fn the_mirror_carries_the_hash_and_the_node_as_owner() {
        let mut pod = Pod::default();
        pod.metadata.name = Some("web-node-a".to_owned());
        pod.metadata.namespace = Some("default".to_owned());
        pod.metadata.uid = Some("h1".to_owned());
        pod.metadata.annotations = Some(
            [
                (CONFIG_SOURCE.to_owned(), "file".to_owned()),
                (CONFIG_HASH.to_owned(), "h1".to_owned()),
            ]
            .into(),
        );
        assert!(is_static_pod(&pod));
        let mirror = mirror_of(&pod, "node-a", "n-uid");
        assert_eq!(mirror_hash(&mirror), Some("h1"));
        assert_eq!(mirror.metadata.uid, None, "the API server gives it its own");
        assert_eq!(mirror.metadata.name.as_deref(), Some("web-node-a"));
        let owner = &mirror.metadata.owner_references.unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.name.as_str(), owner.uid.as_str()),
            ("Node", "node-a", "n-uid")
        );
    }
}
