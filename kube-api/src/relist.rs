//! [`RelistView`]: the objects a watch has shown so far, by key, in which a relist (the first
//! list, or one after an expired resource version) is gathered aside and replaces the view only
//! once complete, so objects never flicker away while the watcher lists again. Every view built
//! from a watch (the node's pods, the mirror pods) keeps its entries in one.

use std::collections::BTreeMap;

use kube::api::DynamicObject;
use kube::runtime::watcher::Event;

/// A watch's view of objects by key, with its relist buffer.
///
/// It exists so that each consumer of a watch decides only what an object means to it (how to
/// insert it, how to forget it), while the relist rules are written once.
#[derive(Debug)]
pub struct RelistView<V> {
    view: BTreeMap<String, V>,
    relist: Option<BTreeMap<String, V>>,
    synced: bool,
}

impl<V> Default for RelistView<V> {
    fn default() -> Self {
        Self {
            view: BTreeMap::new(),
            relist: None,
            synced: false,
        }
    }
}

/// What a consumer does with one object of the watch.
pub trait WatchEntries<V> {
    /// Takes in `object` (added or changed) into `entries`; true if the entries changed.
    fn insert(&mut self, entries: &mut BTreeMap<String, V>, object: DynamicObject) -> bool;

    /// Takes out `object` (deleted) from `entries`; true if the entries changed.
    fn remove(&mut self, entries: &mut BTreeMap<String, V>, object: DynamicObject) -> bool;
}

impl<V> RelistView<V> {
    /// Takes one watcher event through `entries`; true when the view changed (a relist counts
    /// as a change once complete).
    pub fn apply(
        &mut self,
        event: Event<DynamicObject>,
        entries: &mut impl WatchEntries<V>,
    ) -> bool {
        match event {
            Event::Init => {
                self.relist = Some(BTreeMap::new());
                false
            }
            Event::InitApply(object) => {
                entries.insert(self.relist.get_or_insert_with(BTreeMap::new), object);
                false
            }
            Event::InitDone => {
                self.view = self.relist.take().unwrap_or_default();
                self.synced = true;
                true
            }
            Event::Apply(object) => entries.insert(&mut self.view, object),
            Event::Delete(object) => entries.remove(&mut self.view, object),
        }
    }

    /// Whether a complete list has been read.
    #[must_use]
    pub const fn synced(&self) -> bool {
        self.synced
    }

    /// The entries by key.
    #[must_use]
    pub const fn view(&self) -> &BTreeMap<String, V> {
        &self.view
    }

    /// The entries by key, for a consumer that takes in its own writes before the watch shows
    /// them.
    pub fn view_mut(&mut self) -> &mut BTreeMap<String, V> {
        &mut self.view
    }
}

/// `namespace/name` of a watched object: the key every view uses.
#[must_use]
pub fn key_of(object: &DynamicObject) -> String {
    format!(
        "{}/{}",
        object.metadata.namespace.as_deref().unwrap_or_default(),
        object.metadata.name.as_deref().unwrap_or_default()
    )
}
