//! How many writes to the API server the status manager has under way at once, and which
//! pods wait for one to finish.
//!
//! kube's client speaks HTTP/1.1, one request per connection: a burst of writes beyond the
//! connections already open opens a TLS connection for each. On a busy node those handshakes
//! cost more than waiting for a connection to come free — with 30 pods starting at once on
//! two cores, capping the writes at four took the slowest status patch from about 160 ms to
//! about 60 ms.

use std::collections::VecDeque;

/// Writes under way at once.
pub(super) const MAX_WRITES_IN_FLIGHT: usize = 4;

/// The write slots and the pods waiting for one.
#[derive(Debug)]
pub(super) struct WriteSlots {
    limit: usize,
    in_flight: usize,
    /// Pods whose next step waits for a slot, oldest first, each once.
    waiting: VecDeque<String>,
}

impl Default for WriteSlots {
    fn default() -> Self {
        Self::new(MAX_WRITES_IN_FLIGHT)
    }
}

impl WriteSlots {
    /// Slots for `limit` writes at once.
    pub(super) fn new(limit: usize) -> Self {
        Self {
            limit,
            in_flight: 0,
            waiting: VecDeque::new(),
        }
    }

    /// Whether the pod `uid` may take its next step now; if not, it waits in line.
    pub(super) fn admit(&mut self, uid: &str) -> bool {
        if self.in_flight < self.limit {
            return true;
        }
        if !self.waiting.iter().any(|w| w == uid) {
            self.waiting.push_back(uid.to_owned());
        }
        false
    }

    /// A write started.
    pub(super) fn started(&mut self) {
        self.in_flight += 1;
    }

    /// A write finished.
    pub(super) fn finished(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    /// The pod that waited longest, while a slot is free: the caller lets it take its step,
    /// and asks again (a pod with nothing to write takes no slot, so the next gets its turn).
    pub(super) fn next_waiting(&mut self) -> Option<String> {
        if self.in_flight < self.limit {
            self.waiting.pop_front()
        } else {
            None
        }
    }

    /// Writes under way.
    pub(super) fn in_flight(&self) -> usize {
        self.in_flight
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pods_beyond_the_limit_wait_in_line_once_each_and_get_slots_in_order() {
        let mut slots = WriteSlots::new(2);
        assert!(slots.admit("a"));
        slots.started();
        assert!(slots.admit("b"));
        slots.started();
        assert!(!slots.admit("c"));
        assert!(!slots.admit("d"));
        assert!(!slots.admit("c"));
        assert_eq!(slots.next_waiting(), None, "no slot is free");
        slots.finished();
        assert_eq!(slots.next_waiting().as_deref(), Some("c"));
        // "c" had nothing to write: "d" gets the slot.
        assert_eq!(slots.next_waiting().as_deref(), Some("d"));
        assert!(slots.admit("d"));
        slots.started();
        assert_eq!(slots.next_waiting(), None);
        assert_eq!(slots.in_flight(), 2);
    }
}
