//! One pod's status write queue, as the status manager (`sergeant_actors::status_manager`)
//! keeps it: the status last written, the newest one waiting, and at most one write in flight.
//! Reports replace the waiting status (latest wins, so a burst becomes one patch), and since
//! writes to one pod never overlap, an older status can never land after a newer one. Failed
//! writes are retried with the bounded, jittered back-off of every retry against the API server
//! ([`RetryBackoff`]): after an outage the status changes it missed reach it within seconds, and
//! the node's pods do not retry in lockstep. Once the pod actor has terminated a pod being
//! deleted, and its last status is written, the pod is deleted.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::PodStatus;

use crate::backoff::RetryBackoff;

/// The first step between two attempts to write a pod's status.
const BACKOFF_INITIAL: Duration = Duration::from_millis(200);
/// The largest step: once the API server answers again, a missed change is written within it.
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// What to do next for one pod.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Patch this status.
    Patch(Box<PodStatus>),
    /// Delete the pod from the API (grace period 0, UID precondition).
    Delete,
    /// Nothing to do now.
    Idle,
}

/// One pod's queue.
#[derive(Debug)]
pub struct PodEntry {
    last_written: Option<PodStatus>,
    /// The newest status not written yet, and when the oldest unwritten change came in.
    pending: Option<(PodStatus, Instant)>,
    /// The write in flight, and when its change came in.
    in_flight: Option<Instant>,
    /// Waiting out a back-off before the next attempt.
    backing_off: bool,
    finished: bool,
    /// The delay before the next attempt after a failed write.
    backoff: RetryBackoff,
}

impl Default for PodEntry {
    fn default() -> Self {
        Self {
            last_written: None,
            pending: None,
            in_flight: None,
            backing_off: false,
            finished: false,
            backoff: RetryBackoff::new(BACKOFF_INITIAL, BACKOFF_MAX),
        }
    }
}

impl PodEntry {
    /// Takes a new status; `api` is the status the API server shows, what counts as written
    /// when this queue has written nothing yet (after a restart of the status manager).
    pub fn report(&mut self, status: PodStatus, api: Option<&PodStatus>, now: Instant) {
        let newest = self
            .pending
            .as_ref()
            .map(|(s, _)| s)
            .or(self.last_written.as_ref())
            .or(api);
        if newest == Some(&status) {
            return;
        }
        let since = self.pending.take().map_or(now, |(_, since)| since);
        self.pending = Some((status, since));
    }

    /// The pod actor terminated the pod.
    pub fn finish(&mut self) {
        self.finished = true;
    }

    /// What to start now, if anything; `deleting` says the API pod has a deletion timestamp.
    pub fn next(&mut self, deleting: bool, api: Option<&PodStatus>) -> Next {
        if self.in_flight.is_some() || self.backing_off {
            return Next::Idle;
        }
        if let Some((status, since)) = self.pending.take() {
            if self.last_written.as_ref().or(api) != Some(&status) {
                self.in_flight = Some(since);
                return Next::Patch(Box::new(status));
            }
        }
        if self.finished && deleting {
            self.in_flight = Some(Instant::now());
            return Next::Delete;
        }
        Next::Idle
    }

    /// The patch of `status` succeeded; returns how long the change waited to be written.
    pub fn written(&mut self, status: PodStatus, now: Instant) -> Duration {
        self.backoff.reset();
        self.last_written = Some(status);
        self.in_flight
            .take()
            .map_or(Duration::ZERO, |since| now.saturating_duration_since(since))
    }

    /// The write failed; `status` is kept unless a newer one came in. Returns the back-off to
    /// wait before [`Self::retry`].
    pub fn failed(&mut self, status: Option<PodStatus>) -> Duration {
        let since = self.in_flight.take().unwrap_or_else(Instant::now);
        if let (None, Some(status)) = (&self.pending, status) {
            self.pending = Some((status, since));
        }
        self.backing_off = true;
        self.backoff.next_delay()
    }

    /// The back-off is over.
    pub fn retry(&mut self) {
        self.backing_off = false;
    }

    /// Whether a write is in flight (the entry must outlive it).
    #[must_use]
    pub fn busy(&self) -> bool {
        self.in_flight.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(p: &str) -> PodStatus {
        PodStatus {
            phase: Some(p.to_owned()),
            ..PodStatus::default()
        }
    }

    #[test]
    fn a_burst_becomes_one_patch_of_the_newest() {
        let mut entry = PodEntry::default();
        let t0 = Instant::now();
        entry.report(phase("Pending"), None, t0);
        entry.report(phase("Running"), None, t0 + Duration::from_millis(5));
        assert_eq!(
            entry.next(false, None),
            Next::Patch(Box::new(phase("Running")))
        );
        assert_eq!(entry.next(false, None), Next::Idle, "one write at a time");
        let waited = entry.written(phase("Running"), t0 + Duration::from_millis(20));
        assert_eq!(waited, Duration::from_millis(20), "from the first change");
        entry.report(phase("Running"), None, t0);
        assert_eq!(entry.next(false, None), Next::Idle, "unchanged: no patch");
    }

    #[test]
    fn a_newer_status_during_a_write_follows_it() {
        let mut entry = PodEntry::default();
        let now = Instant::now();
        entry.report(phase("Pending"), None, now);
        assert_eq!(
            entry.next(false, None),
            Next::Patch(Box::new(phase("Pending")))
        );
        entry.report(phase("Running"), None, now);
        entry.written(phase("Pending"), now);
        assert_eq!(
            entry.next(false, None),
            Next::Patch(Box::new(phase("Running")))
        );
    }

    #[test]
    fn a_failed_write_is_retried_unless_superseded() {
        let mut entry = PodEntry::default();
        let now = Instant::now();
        entry.report(phase("Pending"), None, now);
        let Next::Patch(sent) = entry.next(false, None) else {
            panic!("no patch");
        };
        let first = entry.failed(Some(*sent));
        assert!(first <= BACKOFF_INITIAL, "{first:?}");
        assert_eq!(entry.next(false, None), Next::Idle, "backing off");
        entry.retry();
        assert_eq!(
            entry.next(false, None),
            Next::Patch(Box::new(phase("Pending")))
        );
        entry.report(phase("Running"), None, now);
        let second = entry.failed(Some(phase("Pending")));
        assert!(second >= BACKOFF_INITIAL, "the back-off grows: {second:?}");
        entry.retry();
        assert_eq!(
            entry.next(false, None),
            Next::Patch(Box::new(phase("Running")))
        );
    }

    #[test]
    fn what_the_api_shows_counts_as_written() {
        let mut entry = PodEntry::default();
        entry.report(phase("Running"), Some(&phase("Running")), Instant::now());
        assert_eq!(entry.next(false, None), Next::Idle);
    }

    #[test]
    fn delete_only_after_the_last_status_and_termination() {
        let mut entry = PodEntry::default();
        let now = Instant::now();
        entry.report(phase("Failed"), None, now);
        entry.finish();
        assert_eq!(
            entry.next(true, None),
            Next::Patch(Box::new(phase("Failed")))
        );
        assert_eq!(entry.next(true, None), Next::Idle);
        entry.written(phase("Failed"), now);
        assert_eq!(entry.next(false, None), Next::Idle, "not being deleted");
        assert_eq!(entry.next(true, None), Next::Delete);
        assert!(entry.busy());
    }
}
