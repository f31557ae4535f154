//! Which objects are in use, and by whom: each user (a pod actor) registers the objects its pod
//! refers to, again whenever the pod changes, and goes away when the pod does. An object is
//! in use while at least one user holds it, as upstream's per-object reference counts: the
//! answer to each change is the objects that came into use (a watch to start) and those no
//! longer used (a watch to drop). Pure: no I/O, no clock.

use std::collections::{BTreeMap, BTreeSet};

/// The objects each user holds, and how many users hold each object.
#[derive(Debug)]
pub(super) struct Registry<K> {
    users: BTreeMap<u64, BTreeSet<K>>,
    counts: BTreeMap<K, usize>,
}

impl<K> Default for Registry<K> {
    fn default() -> Self {
        Self {
            users: BTreeMap::new(),
            counts: BTreeMap::new(),
        }
    }
}

/// What one registration changed.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Changes<K> {
    /// Objects no user held before.
    pub(super) added: Vec<K>,
    /// Objects no user holds any more.
    pub(super) dropped: Vec<K>,
}

impl<K: Ord + Clone> Registry<K> {
    /// `user` now holds exactly `keys` (the objects of its pod as it is now). Objects it held
    /// before and still holds keep their place: a pod update never restarts a watch.
    pub(super) fn register(&mut self, user: u64, keys: BTreeSet<K>) -> Changes<K> {
        let before = self.users.remove(&user).unwrap_or_default();
        let added = keys
            .difference(&before)
            .filter(|key| self.add(key))
            .cloned()
            .collect();
        let dropped = before
            .difference(&keys)
            .filter(|key| self.remove(key))
            .cloned()
            .collect();
        if !keys.is_empty() {
            self.users.insert(user, keys);
        }
        Changes { added, dropped }
    }

    /// `user` is gone: the objects only it held.
    pub(super) fn unregister(&mut self, user: u64) -> Vec<K> {
        self.register(user, BTreeSet::new()).dropped
    }

    /// Whether any user holds `key`.
    pub(super) fn is_used(&self, key: &K) -> bool {
        self.counts.contains_key(key)
    }

    /// One more user of `key`; whether it is the first.
    fn add(&mut self, key: &K) -> bool {
        let count = self.counts.entry(key.clone()).or_default();
        *count = count.saturating_add(1);
        *count == 1
    }

    /// One user fewer of `key`; whether it was the last.
    fn remove(&mut self, key: &K) -> bool {
        let Some(count) = self.counts.get_mut(key) else {
            return false;
        };
        *count = count.saturating_sub(1);
        if *count > 0 {
            return false;
        }
        self.counts.remove(key);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(keys: &[&'static str]) -> BTreeSet<&'static str> {
        keys.iter().copied().collect()
    }

    #[test]
    fn an_object_is_added_by_its_first_user_and_dropped_with_its_last() {
        let mut registry = Registry::default();
        let first = registry.register(1, set(&["ca", "a"]));
        assert_eq!(first.added, ["a", "ca"]);
        assert!(first.dropped.is_empty());
        let second = registry.register(2, set(&["ca"]));
        assert!(second.added.is_empty(), "ca is watched already");
        assert!(registry.unregister(1) == ["a"], "ca is still used by 2");
        assert!(registry.is_used(&"ca"));
        assert!(!registry.is_used(&"a"));
        assert_eq!(registry.unregister(2), ["ca"]);
        assert!(!registry.is_used(&"ca"));
    }

    #[test]
    fn an_update_adds_and_drops_only_what_changed() {
        let mut registry = Registry::default();
        registry.register(1, set(&["ca", "old"]));
        let changes = registry.register(1, set(&["ca", "new"]));
        assert_eq!(
            changes,
            Changes {
                added: vec!["new"],
                dropped: vec!["old"]
            }
        );
        assert!(registry.register(1, set(&["ca", "new"])).added.is_empty());
    }

    #[test]
    fn unknown_users_and_repeated_unregisters_change_nothing() {
        let mut registry: Registry<&str> = Registry::default();
        assert!(registry.unregister(7).is_empty());
        registry.register(1, set(&["a"]));
        assert_eq!(registry.unregister(1), ["a"]);
        assert!(registry.unregister(1).is_empty());
    }
}
