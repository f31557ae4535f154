//! The mirror pods the API server holds for this node, by `namespace/name`, from a watch of the
//! node's pods (other pods are skipped). A relist replaces the view only once complete.

use std::collections::BTreeMap;
use std::sync::Arc;

use kube::api::DynamicObject;
use kube::runtime::watcher::Event;
use sergeant_messages::pods::core::Pod;

use super::plan::key_of;
use super::pod::mirror_hash;

/// The mirror pods seen so far.
#[derive(Debug, Default)]
pub struct MirrorStore {
    view: BTreeMap<String, Arc<Pod>>,
    relist: Option<BTreeMap<String, Arc<Pod>>>,
    synced: bool,
}

impl MirrorStore {
    /// Takes one watcher event; true when the view may have changed.
    pub fn apply(&mut self, event: Event<DynamicObject>) -> bool {
        match event {
            Event::Init => {
                self.relist = Some(BTreeMap::new());
                false
            }
            Event::InitApply(object) => {
                insert(self.relist.get_or_insert_with(BTreeMap::new), object);
                false
            }
            Event::InitDone => {
                self.view = self.relist.take().unwrap_or_default();
                self.synced = true;
                true
            }
            Event::Apply(object) => insert(&mut self.view, object),
            Event::Delete(object) => mirror(object).is_some_and(|pod| {
                self.view.remove(&key_of(&pod));
                true
            }),
        }
    }

    /// Whether a complete list has been read.
    #[must_use]
    pub const fn synced(&self) -> bool {
        self.synced
    }

    /// The mirror pods by `namespace/name`.
    #[must_use]
    pub const fn view(&self) -> &BTreeMap<String, Arc<Pod>> {
        &self.view
    }
}

/// Keeps `object` if it is a mirror pod; true if it was.
fn insert(view: &mut BTreeMap<String, Arc<Pod>>, object: DynamicObject) -> bool {
    mirror(object).is_some_and(|pod| {
        view.insert(key_of(&pod), Arc::new(pod));
        true
    })
}

/// `object` as a pod, if it is a mirror pod the agent can read.
fn mirror(object: DynamicObject) -> Option<Pod> {
    let marked = object
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(super::pod::CONFIG_MIRROR));
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
        let annotations = if mirror {
            serde_json::json!({ "kubernetes.io/config.mirror": "h1" })
        } else {
            serde_json::json!({})
        };
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "default", "uid": name, "annotations": annotations},
            "spec": {"containers": []},
        }))
        .unwrap()
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
