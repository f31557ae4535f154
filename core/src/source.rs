//! Where a pod came from, as upstream marks it on the pod itself: the `kubernetes.io/config.*`
//! annotations that tell a static pod from an API pod and tie a static pod to its mirror.
//!
//! Entry points: [`is_static_pod`], [`is_api_pod`], [`mirror_hash`], [`FirstSeen`] (the time
//! a source first saw each pod); the annotation keys are here once so the sources that set them
//! and the actors that read them cannot drift apart.

mod first_seen;

use k8s_openapi::api::core::v1::Pod;

pub use first_seen::FirstSeen;

/// The annotation naming the source a pod came from ([`FILE_SOURCE`] or [`API_SOURCE`]).
pub const CONFIG_SOURCE: &str = "kubernetes.io/config.source";
/// The annotation holding the hash that identifies a static pod's content (its UID).
pub const CONFIG_HASH: &str = "kubernetes.io/config.hash";
/// The annotation that marks a mirror pod, holding its static pod's hash.
pub const CONFIG_MIRROR: &str = "kubernetes.io/config.mirror";
/// The annotation holding when the agent first saw the pod (see [`FirstSeen`]).
pub const CONFIG_SEEN: &str = "kubernetes.io/config.seen";
/// The annotations the agent puts on a pod itself, as upstream's pod config lists them: a
/// change of these alone is no change of the pod.
pub const LOCAL_ANNOTATIONS: [&str; 3] = [CONFIG_SOURCE, CONFIG_MIRROR, CONFIG_SEEN];
/// The value of [`CONFIG_SOURCE`] on static pods (from a manifest file).
pub const FILE_SOURCE: &str = "file";
/// The value of [`CONFIG_SOURCE`] on pods that came from the API server.
pub const API_SOURCE: &str = "api";

/// Whether `pod` is a static pod (it came from a manifest file).
#[must_use]
pub fn is_static_pod(pod: &Pod) -> bool {
    annotation(pod, CONFIG_SOURCE) == Some(FILE_SOURCE)
}

/// Whether `pod` came from the API server (and so has a status to report there).
#[must_use]
pub fn is_api_pod(pod: &Pod) -> bool {
    annotation(pod, CONFIG_SOURCE) == Some(API_SOURCE)
}

/// The hash that ties a static pod to its mirror: the static pod's `config.hash`.
#[must_use]
pub fn static_hash(pod: &Pod) -> Option<&str> {
    annotation(pod, CONFIG_HASH)
}

/// The hash a mirror pod carries (`None`: not a mirror pod, a pod to run).
#[must_use]
pub fn mirror_hash(pod: &Pod) -> Option<&str> {
    annotation(pod, CONFIG_MIRROR)
}

fn annotation<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn annotated(pairs: &[(&str, &str)]) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.annotations = Some(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<BTreeMap<_, _>>(),
        );
        pod
    }

    #[test]
    fn the_source_annotation_tells_static_from_api_pods() {
        let file = annotated(&[(CONFIG_SOURCE, FILE_SOURCE), (CONFIG_HASH, "h1")]);
        assert!(is_static_pod(&file) && !is_api_pod(&file));
        assert_eq!(static_hash(&file), Some("h1"));
        let api = annotated(&[(CONFIG_SOURCE, API_SOURCE)]);
        assert!(is_api_pod(&api) && !is_static_pod(&api));
        assert!(!is_static_pod(&Pod::default()) && !is_api_pod(&Pod::default()));
    }

    #[test]
    fn a_mirror_pod_is_known_by_its_annotation() {
        assert_eq!(
            mirror_hash(&annotated(&[(CONFIG_MIRROR, "h2")])),
            Some("h2")
        );
        assert_eq!(mirror_hash(&Pod::default()), None);
    }
}
