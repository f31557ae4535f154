//! What becomes of each event before it reaches the API server, as client-go's event
//! correlator does it: a token bucket per object and reason drops a flood (a crash loop, a
//! probe failing every second); events that differ only in their message are combined once
//! there are many; and a repeat of an event already written bumps its `count` and
//! `lastTimestamp` instead of making a new object.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant, SystemTime};

use super::record::{EventType, Involved, Record};

/// Events one object may get at once per reason (upstream's burst).
const BURST: f64 = 25.0;
/// Then one more every five minutes (upstream's refill rate).
const REFILL_EVERY: Duration = Duration::from_secs(300);
/// Messages of one object and reason within [`SIMILAR_WINDOW`] past which they are combined.
const SIMILAR_MAX: usize = 10;
/// How long distinct messages count as similar.
const SIMILAR_WINDOW: Duration = Duration::from_secs(600);
/// The prefix of a combined message, as upstream.
const COMBINED: &str = "(combined from similar events): ";
/// How many entries each cache keeps; the least recently used go first.
const CACHE_MAX: usize = 4096;

/// What to write for one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// A new Event object `name`.
    Create {
        /// Its name.
        name: String,
        /// The message (combined, if it had to be).
        message: String,
    },
    /// A repeat: the Event `name` gets this count and last timestamp.
    Patch {
        /// The Event already written.
        name: String,
        /// Its new count.
        count: i32,
        /// The message (combined, if it had to be).
        message: String,
        /// When it was first seen, should it have to be written anew.
        first: SystemTime,
    },
    /// Rate-limited: nothing is written.
    Drop,
}

type Key = (Involved, EventType, &'static str);

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

#[derive(Debug)]
struct Seen {
    name: String,
    count: i32,
    first: SystemTime,
    used: Instant,
}

#[derive(Debug)]
struct Similar {
    messages: BTreeSet<String>,
    since: Instant,
}

/// The state of the correlation: buckets, message groups and events written.
#[derive(Debug, Default)]
pub struct Correlator {
    buckets: BTreeMap<(String, &'static str), Bucket>,
    similar: BTreeMap<Key, Similar>,
    seen: BTreeMap<(Key, String), Seen>,
}

impl Correlator {
    /// Decides what to write for `record`, seen at `now`.
    pub fn correlate(&mut self, record: &Record, now: Instant) -> Write {
        if !self.take_token(record, now) {
            return Write::Drop;
        }
        let key: Key = (record.object.clone(), record.kind, record.reason);
        let message = self.combined(&key, &record.message, now);
        let entry = (key, dedupe_text(&message).to_owned());
        if let Some(seen) = self.seen.get_mut(&entry) {
            seen.count += 1;
            seen.used = now;
            return Write::Patch {
                name: seen.name.clone(),
                count: seen.count,
                message,
                first: seen.first,
            };
        }
        let name = event_name(&record.object.name, record.at);
        evict(&mut self.seen, |s| s.used);
        self.seen.insert(
            entry,
            Seen {
                name: name.clone(),
                count: 1,
                first: record.at,
                used: now,
            },
        );
        Write::Create { name, message }
    }

    /// The write for `record` (with `message`) failed: the next repeat starts a new Event.
    pub fn forget(&mut self, record: &Record, message: &str) {
        let key: Key = (record.object.clone(), record.kind, record.reason);
        self.seen.remove(&(key, dedupe_text(message).to_owned()));
    }

    fn take_token(&mut self, record: &Record, now: Instant) -> bool {
        evict(&mut self.buckets, |b| b.at);
        let bucket = self
            .buckets
            .entry((record.object.uid.clone(), record.reason))
            .or_insert(Bucket {
                tokens: BURST,
                at: now,
            });
        let refill =
            now.saturating_duration_since(bucket.at).as_secs_f64() / REFILL_EVERY.as_secs_f64();
        bucket.tokens = (bucket.tokens + refill).min(BURST);
        bucket.at = now;
        if bucket.tokens < 1.0 {
            return false;
        }
        bucket.tokens -= 1.0;
        true
    }

    /// The message to write: the record's own, or a combined one once the object has had many
    /// different messages for this reason lately.
    fn combined(&mut self, key: &Key, message: &str, now: Instant) -> String {
        evict(&mut self.similar, |s| s.since);
        let group = self.similar.entry(key.clone()).or_insert(Similar {
            messages: BTreeSet::new(),
            since: now,
        });
        if now.saturating_duration_since(group.since) > SIMILAR_WINDOW {
            group.messages.clear();
            group.since = now;
        }
        group.messages.insert(message.to_owned());
        if group.messages.len() >= SIMILAR_MAX {
            format!("{COMBINED}{message}")
        } else {
            message.to_owned()
        }
    }
}

/// What tells repeats apart: the message, or for combined messages none — they all go to one
/// Event, whose message shows the latest.
fn dedupe_text(message: &str) -> &str {
    if message.starts_with(COMBINED) {
        COMBINED
    } else {
        message
    }
}

/// Upstream's event name: the object's name and the time in hex nanoseconds.
fn event_name(object: &str, at: SystemTime) -> String {
    let nanos = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{object}.{nanos:x}")
}

/// Keeps `cache` under [`CACHE_MAX`] entries by dropping the one used least recently.
fn evict<K: Ord + Clone, V>(cache: &mut BTreeMap<K, V>, used: impl Fn(&V) -> Instant) {
    if cache.len() < CACHE_MAX {
        return;
    }
    if let Some(oldest) = cache
        .iter()
        .min_by_key(|(_, v)| used(v))
        .map(|(k, _)| k.clone())
    {
        cache.remove(&oldest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::record::ObjectKind;

    fn record(reason: &'static str, message: &str) -> Record {
        Record {
            object: Involved {
                kind: ObjectKind::Pod,
                namespace: "ns".to_owned(),
                name: "web".to_owned(),
                uid: "u1".to_owned(),
                field_path: Some("spec.containers{c}".to_owned()),
            },
            kind: EventType::Warning,
            reason,
            message: message.to_owned(),
            at: SystemTime::now(),
        }
    }

    #[test]
    fn a_repeat_patches_the_event_already_written() {
        let mut correlator = Correlator::default();
        let now = Instant::now();
        let Write::Create { name, .. } = correlator.correlate(&record("BackOff", "m"), now) else {
            panic!("not created");
        };
        assert!(name.starts_with("web."), "{name}");
        let Write::Patch {
            name: again, count, ..
        } = correlator.correlate(&record("BackOff", "m"), now)
        else {
            panic!("not patched");
        };
        assert_eq!((again, count), (name, 2));
        correlator.forget(&record("BackOff", "m"), "m");
        assert!(matches!(
            correlator.correlate(&record("BackOff", "m"), now),
            Write::Create { .. }
        ));
    }

    #[test]
    fn a_flood_is_cut_then_trickles() {
        let mut correlator = Correlator::default();
        let now = Instant::now();
        let written = (0..100)
            .filter(|_| correlator.correlate(&record("BackOff", "m"), now) != Write::Drop)
            .count();
        assert_eq!(written, 25);
        assert_ne!(
            correlator.correlate(&record("Started", "m"), now),
            Write::Drop,
            "another reason has its own bucket"
        );
        let later = now + REFILL_EVERY;
        assert_ne!(
            correlator.correlate(&record("BackOff", "m"), later),
            Write::Drop
        );
        assert_eq!(
            correlator.correlate(&record("BackOff", "m"), later),
            Write::Drop
        );
    }

    #[test]
    fn many_different_messages_are_combined() {
        let mut correlator = Correlator::default();
        let now = Instant::now();
        let messages: Vec<String> = (0..12)
            .map(
                |i| match correlator.correlate(&record("Unhealthy", &i.to_string()), now) {
                    Write::Create { message, .. } | Write::Patch { message, .. } => message,
                    Write::Drop => String::new(),
                },
            )
            .collect();
        assert_eq!(messages[8], "8");
        assert_eq!(messages[9], format!("{COMBINED}9"));
        assert_eq!(messages[11], format!("{COMBINED}11"));
        assert!(
            matches!(
                correlator.correlate(&record("Unhealthy", "12"), now),
                Write::Patch { count: 4, .. }
            ),
            "combined messages go to one Event"
        );
    }
}
