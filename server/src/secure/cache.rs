//! A small time-bounded cache of authentication and authorization answers, so a busy client
//! does not cost a TokenReview or SubjectAccessReview per request.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Entries kept at most; past it the cache is cleared (answers are cheap to ask again).
const MAX_ENTRIES: usize = 4096;

/// Answers by key, each with its own expiry.
pub struct TtlCache<K, V> {
    entries: Mutex<HashMap<K, (V, Instant)>>,
}

impl<K: Eq + Hash, V: Clone> TtlCache<K, V> {
    /// An empty cache.
    #[must_use]
    pub fn new() -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The answer for `key`, if one was stored and has not expired.
    pub fn get(&self, key: &K) -> Option<V> {
        let entries = self.entries.lock().ok()?;
        entries
            .get(key)
            .filter(|(_, until)| *until > Instant::now())
            .map(|(value, _)| value.clone())
    }

    /// Stores `value` for `key` for `ttl` (a zero TTL stores nothing).
    pub fn put(&self, key: K, value: V, ttl: Duration) {
        if ttl.is_zero() {
            return;
        }
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
            entries.insert(key, (value, Instant::now() + ttl));
        }
    }
}

impl<K: Eq + Hash, V: Clone> Default for TtlCache<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_expire_and_zero_ttls_are_not_kept() {
        let cache = TtlCache::new();
        cache.put("a", 1, Duration::from_secs(60));
        cache.put("b", 2, Duration::ZERO);
        cache.put("c", 3, Duration::from_nanos(1));
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(cache.get(&"a"), Some(1));
        assert_eq!(cache.get(&"b"), None);
        assert_eq!(cache.get(&"c"), None);
    }
}
