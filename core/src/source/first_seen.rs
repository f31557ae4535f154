//! When a source first saw each of its pods, as upstream's pod config records it: every pod a
//! source adds is annotated `kubernetes.io/config.seen` with the time it arrived, and keeps
//! that time through later updates until it leaves the source. The runtime gets the annotation
//! with the pod's other annotations (sandbox config, image pulls), and mirror pods carry it.

use std::collections::{HashMap, HashSet};
use std::time::SystemTime;

use k8s_openapi::api::core::v1::Pod;

use super::CONFIG_SEEN;
use crate::time::rfc3339_nanos_fixed;

/// The first-seen time of each pod of one source, by UID, as its annotation holds it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FirstSeen {
    times: HashMap<String, String>,
}

impl FirstSeen {
    /// Annotates `pod` with the time its UID was first seen: the one remembered, or `now` for
    /// a UID not seen before (then remembered). A pod without a UID is left as it is: no two
    /// copies of it could be told to be the same pod.
    pub fn mark(&mut self, pod: &mut Pod, now: SystemTime) {
        let Some(uid) = pod.metadata.uid.as_deref().filter(|uid| !uid.is_empty()) else {
            return;
        };
        let seen = self
            .times
            .entry(uid.to_owned())
            .or_insert_with(|| rfc3339_nanos_fixed(now))
            .clone();
        pod.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(CONFIG_SEEN.to_owned(), seen);
    }

    /// Forgets every pod whose UID is not among `uids`, the pods the source still has: one
    /// that comes back later is new to it, as it is to upstream's pod config.
    pub fn keep_only<'a>(&mut self, uids: impl IntoIterator<Item = &'a str>) {
        let kept: HashSet<&str> = uids.into_iter().collect();
        self.times.retain(|uid, _| kept.contains(uid.as_str()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn pod(uid: Option<&str>) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.uid = uid.map(str::to_owned);
        pod
    }

    fn seen(pod: &Pod) -> Option<&str> {
        pod.metadata
            .annotations
            .as_ref()?
            .get(CONFIG_SEEN)
            .map(String::as_str)
    }

    #[test]
    fn a_pod_keeps_the_time_it_was_first_seen_until_it_leaves() {
        let start = SystemTime::UNIX_EPOCH + Duration::from_nanos(1_700_000_000_123_456_789);
        let later = start + Duration::from_secs(5);
        let first = "2023-11-14T22:13:20.123456789Z";
        let mut memory = FirstSeen::default();
        // (uid, when it is marked, pods still in the source before marking, time it shows): b
        // leaves the source and comes back, then a; each is seen anew.
        let steps = [
            (Some("a"), start, None, Some(first)),
            (Some("a"), later, None, Some(first)),
            (
                Some("b"),
                later,
                None,
                Some("2023-11-14T22:13:25.123456789Z"),
            ),
            (Some("a"), later, Some(vec!["a"]), Some(first)),
            (Some("b"), start, Some(vec!["a"]), Some(first)),
            (
                Some("a"),
                later,
                Some(vec![]),
                Some("2023-11-14T22:13:25.123456789Z"),
            ),
            (None, start, None, None),
            (Some(""), start, None, None),
        ];
        for (index, (uid, now, still, shown)) in steps.into_iter().enumerate() {
            if let Some(still) = still {
                memory.keep_only(still);
            }
            let mut marked = pod(uid);
            memory.mark(&mut marked, now);
            assert_eq!(seen(&marked), shown, "step {index}: {uid:?}");
        }
    }

    #[test]
    fn the_pods_own_annotations_are_kept_and_a_stale_time_replaced() {
        let mut given = pod(Some("a"));
        given.metadata.annotations = Some(
            [
                ("note".to_owned(), "hi".to_owned()),
                (CONFIG_SEEN.to_owned(), "from the manifest".to_owned()),
            ]
            .into(),
        );
        FirstSeen::default().mark(&mut given, SystemTime::UNIX_EPOCH);
        let annotations = given.metadata.annotations.unwrap();
        assert_eq!(annotations["note"], "hi");
        assert_eq!(annotations[CONFIG_SEEN], "1970-01-01T00:00:00.000000000Z");
    }
}
