//! What the mirror pods need, as upstream's pod sync decides it: every static pod has a mirror
//! pod with its hash; a mirror pod with another hash, or being deleted, is deleted (and made
//! again once gone); a mirror pod without a static pod is deleted.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;

use crate::source::{mirror_hash, static_hash};

/// One write to the API server.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Create the mirror pod of this static pod.
    Create(Arc<Pod>),
    /// Delete the mirror pod `namespace/name` with this UID.
    Delete {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// Its UID (a precondition: never delete a newer one).
        uid: String,
    },
}

/// `namespace/name` of a pod, which a static pod and its mirror share.
#[must_use]
pub fn key_of(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or("default"),
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}

/// The actions that bring `mirrors` (by key) in line with `statics` (by key).
#[must_use]
pub fn plan(
    statics: &BTreeMap<String, Arc<Pod>>,
    mirrors: &BTreeMap<String, Arc<Pod>>,
) -> Vec<(String, Action)> {
    let mut actions = Vec::new();
    for (key, static_pod) in statics {
        match mirrors.get(key) {
            None => actions.push((key.clone(), Action::Create(Arc::clone(static_pod)))),
            Some(mirror)
                if mirror.metadata.deletion_timestamp.is_some()
                    || mirror_hash(mirror) != static_hash(static_pod) =>
            {
                actions.push((key.clone(), delete(mirror)));
            }
            Some(_) => {}
        }
    }
    for (key, mirror) in mirrors {
        if !statics.contains_key(key) {
            actions.push((key.clone(), delete(mirror)));
        }
    }
    actions
}

fn delete(mirror: &Pod) -> Action {
    Action::Delete {
        namespace: mirror.metadata.namespace.clone().unwrap_or_default(),
        name: mirror.metadata.name.clone().unwrap_or_default(),
        uid: mirror.metadata.uid.clone().unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::CONFIG_HASH;
    use crate::source::CONFIG_MIRROR;

    fn pod(name: &str, annotation: &str, hash: &str) -> Arc<Pod> {
        let mut pod = Pod::default();
        pod.metadata.name = Some(name.to_owned());
        pod.metadata.namespace = Some("default".to_owned());
        pod.metadata.uid = Some(format!("uid-{name}-{hash}"));
        pod.metadata.annotations = Some([(annotation.to_owned(), hash.to_owned())].into());
        Arc::new(pod)
    }

    fn by_key(pods: &[Arc<Pod>]) -> BTreeMap<String, Arc<Pod>> {
        pods.iter().map(|p| (key_of(p), Arc::clone(p))).collect()
    }

    #[test]
    fn missing_outdated_deleted_and_orphaned_mirrors() {
        let statics = by_key(&[
            pod("new", CONFIG_HASH, "h1"),
            pod("same", CONFIG_HASH, "h2"),
            pod("edited", CONFIG_HASH, "h3"),
            pod("deleting", CONFIG_HASH, "h4"),
        ]);
        let mut deleting = (*pod("deleting", CONFIG_MIRROR, "h4")).clone();
        deleting.metadata.deletion_timestamp =
            Some(crate::status::api_time(std::time::SystemTime::now()));
        let mirrors = by_key(&[
            pod("same", CONFIG_MIRROR, "h2"),
            pod("edited", CONFIG_MIRROR, "old"),
            Arc::new(deleting),
            pod("orphan", CONFIG_MIRROR, "h9"),
        ]);
        let actions: Vec<(String, &str)> = plan(&statics, &mirrors)
            .into_iter()
            .map(|(key, action)| match action {
                Action::Create(_) => (key, "create"),
                Action::Delete { .. } => (key, "delete"),
            })
            .collect();
        assert_eq!(
            actions,
            [
                ("default/deleting".to_owned(), "delete"),
                ("default/edited".to_owned(), "delete"),
                ("default/new".to_owned(), "create"),
                ("default/orphan".to_owned(), "delete"),
            ]
        );
    }
}
