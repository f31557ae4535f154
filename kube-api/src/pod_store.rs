//! What the API pod watch has shown so far, kept as a whole view: every pod bound to the node,
//! or why it was rejected. A relist (the first list, or one after an expired resource version)
//! is gathered aside and replaces the view only once complete, so pods never flicker away while
//! the watcher lists again. Each pod is annotated with the time the store first saw it
//! (`kubernetes.io/config.seen`), kept through its changes while it stays bound here.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::SystemTime;

use kube::api::DynamicObject;
use kube::runtime::watcher::Event;
use sergeant_core::source::FirstSeen;
use sergeant_messages::pods::core::Pod;
use sergeant_messages::pods::{PodSource, RejectedManifest, SourceSnapshot};

use crate::pod_object::{convert, origin_of};
use crate::relist::{key_of, RelistView, WatchEntries};

/// One object of the view.
#[derive(Debug, Clone, PartialEq)]
enum Entry {
    Pod(Arc<Pod>),
    Rejected(RejectedManifest),
}

/// The pods bound to the node, by `namespace/name`.
#[derive(Debug, Default)]
pub struct ApiStore {
    view: RelistView<Entry>,
    pods: BoundPods,
}

impl ApiStore {
    /// Takes one watcher event; true when the view changed (time to publish).
    pub fn apply(&mut self, event: Event<DynamicObject>) -> bool {
        let changed = self.view.apply(event, &mut self.pods);
        if changed {
            let uids = self.view.view().values().filter_map(|entry| match entry {
                Entry::Pod(pod) => pod.metadata.uid.as_deref(),
                Entry::Rejected(_) => None,
            });
            self.pods.seen.keep_only(uids);
        }
        changed
    }

    /// Whether a complete list has been read.
    pub fn synced(&self) -> bool {
        self.view.synced()
    }

    /// The view as the pod manager takes it.
    pub fn snapshot(&self) -> SourceSnapshot {
        let mut pods = Vec::new();
        let mut rejected = Vec::new();
        for entry in self.view.view().values() {
            match entry {
                Entry::Pod(pod) => pods.push(Arc::clone(pod)),
                Entry::Rejected(why) => rejected.push(why.clone()),
            }
        }
        SourceSnapshot {
            synced: self.view.synced(),
            source: PodSource::Api,
            pods,
            rejected,
        }
    }
}

/// Each pod bound to the node decoded and checked alone: a pod, marked with when it was first
/// seen, or why it was rejected.
#[derive(Debug, Default)]
struct BoundPods {
    seen: FirstSeen,
}

impl WatchEntries<Entry> for BoundPods {
    fn insert(&mut self, view: &mut BTreeMap<String, Entry>, object: DynamicObject) -> bool {
        let key = key_of(&object);
        match convert(&object) {
            Ok(Some(mut pod)) => {
                self.seen.mark(&mut pod, SystemTime::now());
                view.insert(key, Entry::Pod(Arc::new(pod)));
            }
            Ok(None) => {
                view.remove(&key);
            }
            Err(error) => {
                view.insert(
                    key,
                    Entry::Rejected(RejectedManifest {
                        origin: origin_of(&object),
                        error: error.to_string(),
                    }),
                );
            }
        }
        true
    }

    fn remove(&mut self, view: &mut BTreeMap<String, Entry>, object: DynamicObject) -> bool {
        view.remove(&key_of(&object));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, image: &str) -> DynamicObject {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}")},
            "spec": {"containers": [{"name": "c", "image": image}]},
        }))
        .unwrap()
    }

    fn names(store: &ApiStore) -> Vec<String> {
        store
            .snapshot()
            .pods
            .iter()
            .map(|p| p.metadata.name.clone().unwrap_or_default())
            .collect()
    }

    #[test]
    fn a_relist_replaces_the_view_only_when_complete() {
        let mut store = ApiStore::default();
        assert!(!store.apply(Event::Init));
        assert!(!store.apply(Event::InitApply(pod("a", "busybox"))));
        assert!(!store.snapshot().synced);
        assert!(store.apply(Event::InitDone));
        assert!(store.synced());
        assert_eq!(names(&store), ["a"]);
        // An expired resource version: the watcher lists again; "a" is gone, "b" is new.
        store.apply(Event::Init);
        store.apply(Event::InitApply(pod("b", "busybox")));
        assert_eq!(names(&store), ["a"], "kept until the relist is complete");
        store.apply(Event::InitDone);
        assert_eq!(names(&store), ["b"]);
        assert!(store.apply(Event::Delete(pod("b", "busybox"))));
        assert!(names(&store).is_empty());
    }

    #[test]
    fn a_pod_keeps_the_time_it_was_first_seen_while_it_is_bound_here() {
        let mut store = ApiStore::default();
        let seen = |store: &ApiStore| {
            let pods = store.snapshot().pods;
            let annotations = pods[0].metadata.annotations.clone().unwrap();
            annotations["kubernetes.io/config.seen"].clone()
        };
        store.apply(Event::Init);
        store.apply(Event::InitApply(pod("a", "busybox")));
        store.apply(Event::InitDone);
        let first = seen(&store);
        assert_eq!(
            first.len(),
            "2027-01-01T00:00:00.000000000Z".len(),
            "{first}"
        );
        // Changed, and listed again after an expired resource version: still first seen then.
        store.apply(Event::Apply(pod("a", "busybox:2")));
        store.apply(Event::Init);
        store.apply(Event::InitApply(pod("a", "busybox:3")));
        store.apply(Event::InitDone);
        assert_eq!(seen(&store), first);
        // Gone, then bound here again: seen anew.
        store.apply(Event::Delete(pod("a", "busybox")));
        store.apply(Event::Apply(pod("a", "busybox")));
        assert_ne!(seen(&store), first);
    }

    #[test]
    fn a_bad_pod_is_rejected_alone() {
        let mut store = ApiStore::default();
        store.apply(Event::Init);
        store.apply(Event::InitApply(pod("good", "busybox")));
        store.apply(Event::InitApply(pod("bad", "")));
        store.apply(Event::InitDone);
        let snapshot = store.snapshot();
        assert_eq!(names(&store), ["good"]);
        assert_eq!(
            snapshot.rejected,
            [RejectedManifest {
                origin: "pods/default/bad (uid uid-bad)".into(),
                error: "spec.containers[0].image: required: a container needs an image".into(),
            }]
        );
        // Fixed in place: accepted, and the rejection is gone.
        store.apply(Event::Apply(pod("bad", "busybox")));
        assert_eq!(names(&store), ["bad", "good"]);
        assert!(store.snapshot().rejected.is_empty());
    }
}
