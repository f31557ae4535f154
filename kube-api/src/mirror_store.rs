//! The mirror pods the API server holds for this node, by `namespace/name`, from a watch of the
//! node's pods (other pods are skipped): what the `mirror-pods` actor (`sergeant_actors::mirror`)
//! compares with the static pods. A relist replaces the view only once complete. The
//! agent's own writes are taken in as soon as the API server confirms them, since the watch
//! shows them only a moment later: a look in between would otherwise write again (a second
//! create of a mirror pod just made, refused as AlreadyExists).

use std::collections::BTreeMap;
use std::sync::Arc;

use kube::api::DynamicObject;
use kube::runtime::watcher::Event;
use sergeant_core::mirror::plan::key_of;
use sergeant_core::source::mirror_hash;
use sergeant_messages::pods::core::Pod;

use crate::relist::{RelistView, WatchEntries};

/// A write of the agent's own that the API server confirmed.
#[derive(Debug, Clone, PartialEq)]
pub enum Written {
    /// This mirror pod was created (as the API server returned it, with its UID).
    Created(Arc<Pod>),
    /// The mirror pod `key` with this UID was deleted (or was already gone).
    Deleted {
        /// Its `namespace/name`.
        key: String,
        /// Its UID.
        uid: String,
    },
}

/// The mirror pods seen so far.
#[derive(Debug, Default)]
pub struct MirrorStore {
    view: RelistView<Arc<Pod>>,
}

impl MirrorStore {
    /// Takes one watcher event; true when the view may have changed.
    pub fn apply(&mut self, event: Event<DynamicObject>) -> bool {
        self.view.apply(event, &mut MirrorPods)
    }

    /// Takes in a write of the agent's own before the watch shows it.
    pub fn wrote(&mut self, written: Written) {
        let view = self.view.view_mut();
        match written {
            Written::Created(pod) => {
                view.insert(key_of(&pod), pod);
            }
            Written::Deleted { key, uid } => {
                forget(view, &key, &uid);
            }
        }
    }

    /// Whether a complete list has been read.
    #[must_use]
    pub const fn synced(&self) -> bool {
        self.view.synced()
    }

    /// The mirror pods by `namespace/name`.
    #[must_use]
    pub const fn view(&self) -> &BTreeMap<String, Arc<Pod>> {
        self.view.view()
    }
}

/// Of the node's pods, the mirror pods the agent can read.
struct MirrorPods;

impl WatchEntries<Arc<Pod>> for MirrorPods {
    fn insert(&mut self, view: &mut BTreeMap<String, Arc<Pod>>, object: DynamicObject) -> bool {
        mirror(object).is_some_and(|pod| {
            view.insert(key_of(&pod), Arc::new(pod));
            true
        })
    }

    fn remove(&mut self, view: &mut BTreeMap<String, Arc<Pod>>, object: DynamicObject) -> bool {
        mirror(object).is_some_and(|pod| {
            let uid = pod.metadata.uid.as_deref().unwrap_or_default();
            forget(view, &key_of(&pod), uid)
        })
    }
}

/// Drops `key` if it still is the mirror pod with `uid` (not one made since); true if so.
fn forget(view: &mut BTreeMap<String, Arc<Pod>>, key: &str, uid: &str) -> bool {
    let same = view
        .get(key)
        .is_some_and(|pod| pod.metadata.uid.as_deref() == Some(uid));
    if same {
        view.remove(key);
    }
    same
}

/// `object` as a pod, if it is a mirror pod the agent can read.
fn mirror(object: DynamicObject) -> Option<Pod> {
    let marked = object
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(sergeant_core::source::CONFIG_MIRROR));
    if !marked {
        return None;
    }
    let pod: Pod = serde_json::to_value(object)
        .and_then(serde_json::from_value)
        .ok()?;
    mirror_hash(&pod).is_some().then_some(pod)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(name: &str, mirror: bool) -> DynamicObject {
        with_uid(name, name, mirror)
    }

    fn with_uid(name: &str, uid: &str, mirror: bool) -> DynamicObject {
        let annotations = if mirror {
            serde_json::json!({ "kubernetes.io/config.mirror": "h1" })
        } else {
            serde_json::json!({})
        };
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "default", "uid": uid, "annotations": annotations},
            "spec": {"containers": []},
        }))
        .unwrap()
    }

    fn pod(object: DynamicObject) -> Pod {
        serde_json::from_value(serde_json::to_value(object).unwrap()).unwrap()
    }

    fn uid_of(store: &MirrorStore) -> Option<&str> {
        store.view().get("default/m")?.metadata.uid.as_deref()
    }

    #[test]
    fn own_writes_count_before_the_watch_shows_them_and_late_events_do_not_undo_them() {
        let mut store = MirrorStore::default();
        store.apply(Event::Init);
        store.apply(Event::InitApply(with_uid("m", "old", true)));
        store.apply(Event::InitDone);
        // Replaced: the agent deletes "old" and creates "new" before the watch shows either.
        store.wrote(Written::Deleted {
            key: "default/m".to_owned(),
            uid: "old".to_owned(),
        });
        assert_eq!(uid_of(&store), None);
        store.wrote(Written::Created(Arc::new(pod(with_uid("m", "new", true)))));
        assert_eq!(
            uid_of(&store),
            Some("new"),
            "seen before the watch shows it"
        );
        assert!(
            !store.apply(Event::Delete(with_uid("m", "old", true))),
            "the late deletion of the old one changes nothing"
        );
        assert_eq!(uid_of(&store), Some("new"));
        store.apply(Event::Apply(with_uid("m", "new", true)));
        assert_eq!(uid_of(&store), Some("new"));
        store.wrote(Written::Deleted {
            key: "default/m".to_owned(),
            uid: "old".to_owned(),
        });
        assert_eq!(uid_of(&store), Some("new"), "a deletion by UID only");
    }

    #[test]
    fn only_mirror_pods_are_kept() {
        let mut store = MirrorStore::default();
        store.apply(Event::Init);
        store.apply(Event::InitApply(object("m", true)));
        store.apply(Event::InitApply(object("plain", false)));
        assert!(!store.synced());
        assert!(store.apply(Event::InitDone));
        assert_eq!(store.view().keys().collect::<Vec<_>>(), ["default/m"]);
        assert!(!store.apply(Event::Apply(object("other", false))));
        assert!(store.apply(Event::Delete(object("m", true))));
        assert!(store.view().is_empty());
    }
}
