//! Back-off of things that keep failing: container restarts (CrashLoopBackOff) and image pulls
//! (ImagePullBackOff). How long the next attempt waits.
//!
//! As upstream: the first restart is immediate, each next one waits twice as long as the one
//! before (from the configured initial period up to the maximum), and a container that ran for
//! ten minutes before failing starts over. [`Doubling`] is the plain retry pause the agent's
//! other loops use, and [`RetryBackoff`] its jittered form for retries against the API server.

mod doubling;
mod retry;

pub use doubling::Doubling;
pub use retry::RetryBackoff;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// A container that ran at least this long before it failed has its back-off reset.
const RESET_AFTER_RUNNING: Duration = Duration::from_secs(600);

/// The back-off periods, from the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackoffPolicy {
    /// The wait before the second restart.
    pub initial: Duration,
    /// The longest wait.
    pub max: Duration,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// The wait the next attempt owes, counted from the failure it follows.
    delay: Duration,
    /// When that wait ends, once the failure's time is known; the next sync is due then.
    until: Option<Instant>,
}

/// The back-off state of every container (or image) of one pod, by name.
#[derive(Debug, Clone, Default)]
pub struct Backoff {
    entries: BTreeMap<String, Entry>,
}

impl Backoff {
    /// Whether `key` may be tried again now; `Err(remaining)` while it waits. For image pulls,
    /// whose wait runs from the failure [`Backoff::failed`] recorded.
    ///
    /// # Errors
    /// The time left in the back-off.
    pub fn check(&self, key: &str, now: Instant) -> Result<(), Duration> {
        match self.entries.get(key).and_then(|e| e.until) {
            Some(until) if until > now => Err(until - now),
            _ => Ok(()),
        }
    }

    /// Whether `container`, whose last instance ended at `exited_at`, may start again now;
    /// `Err(remaining)` while it waits. As upstream, the wait runs from the instance's end
    /// (its `finishedAt`), not from its start, so a container that ran a while before it
    /// crashed still waits the whole back-off.
    ///
    /// # Errors
    /// The time left in the back-off.
    pub fn wait_after_exit(
        &mut self,
        container: &str,
        exited_at: Instant,
        now: Instant,
    ) -> Result<(), Duration> {
        let Some(entry) = self.entries.get_mut(container) else {
            return Ok(());
        };
        let until = exited_at + entry.delay;
        entry.until = Some(until);
        if until > now {
            Err(until - now)
        } else {
            Ok(())
        }
    }

    /// Records a restart of `container` after it ran for `ran_for`; returns the wait the
    /// restart after this one owes, counted from when this instance ends.
    pub fn restarted(
        &mut self,
        container: &str,
        ran_for: Duration,
        policy: BackoffPolicy,
    ) -> Duration {
        let delay = self.next_delay(container, ran_for, policy);
        self.entries
            .insert(container.to_owned(), Entry { delay, until: None });
        delay
    }

    /// Notes that `container` starts without owing a wait (its first instance, or one that
    /// replaces an instance of another spec): its back-off starts over, and a restart count
    /// carried over from instances of the old spec is not read as one of this spec's
    /// ([`Backoff::resume`] leaves a known container alone). A record it has is kept.
    pub fn fresh(&mut self, container: &str) {
        self.entries.entry(container.to_owned()).or_insert(Entry {
            delay: Duration::ZERO,
            until: None,
        });
    }

    /// Records a failed attempt at `key` (an image pull) at `now`; returns how long the next
    /// attempt waits from now.
    pub fn failed(&mut self, key: &str, now: Instant, policy: BackoffPolicy) -> Duration {
        let delay = self.next_delay(key, Duration::ZERO, policy);
        self.entries.insert(
            key.to_owned(),
            Entry {
                delay,
                until: Some(now + delay),
            },
        );
        delay
    }

    /// The wait after the one `key` owes now: the initial period at first (or after a run of
    /// ten minutes, or when it owed none), else twice the last, up to the maximum.
    fn next_delay(&self, key: &str, ran_for: Duration, policy: BackoffPolicy) -> Duration {
        match self.entries.get(key) {
            Some(entry) if ran_for < RESET_AFTER_RUNNING && !entry.delay.is_zero() => {
                (entry.delay * 2).min(policy.max)
            }
            _ => policy.initial.min(policy.max),
        }
    }

    /// Rebuilds the back-off of a container found in the runtime by an actor that has no
    /// record of it (after sergeant restarted): an instance restarted `restarts` times owes
    /// the wait it would have owed, counted from its end.
    pub fn resume(&mut self, container: &str, restarts: u32, policy: BackoffPolicy) {
        if restarts == 0 || self.entries.contains_key(container) {
            return;
        }
        let doublings = restarts.saturating_sub(1).min(31);
        let delay = policy
            .initial
            .saturating_mul(1 << doublings)
            .min(policy.max);
        self.entries
            .insert(container.to_owned(), Entry { delay, until: None });
    }

    /// The current wait of `container`, for the CrashLoopBackOff message.
    #[must_use]
    pub fn delay(&self, container: &str) -> Option<Duration> {
        self.entries.get(container).map(|e| e.delay)
    }

    /// The earliest moment a waiting container may start, to schedule the next sync.
    #[must_use]
    pub fn next_expiry(&self, now: Instant) -> Option<Instant> {
        self.entries
            .values()
            .filter_map(|e| e.until)
            .filter(|until| *until > now)
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: BackoffPolicy = BackoffPolicy {
        initial: Duration::from_secs(10),
        max: Duration::from_secs(35),
    };

    #[test]
    fn the_first_restart_is_immediate_then_waits_double_up_to_the_max() {
        let mut backoff = Backoff::default();
        let t0 = Instant::now();
        assert!(backoff.wait_after_exit("c", t0, t0).is_ok());
        let short = Duration::from_secs(1);
        let delays: Vec<u64> = (0..4)
            .map(|_| backoff.restarted("c", short, POLICY).as_secs())
            .collect();
        assert_eq!(delays, vec![10, 20, 35, 35]);
        assert!(backoff.wait_after_exit("other", t0, t0).is_ok());
        assert_eq!(
            backoff
                .restarted("c", RESET_AFTER_RUNNING, POLICY)
                .as_secs(),
            10,
            "a long run resets"
        );
    }

    #[test]
    fn a_restart_waits_from_the_end_of_the_instance_not_its_start() {
        let mut backoff = Backoff::default();
        let started = Instant::now();
        backoff.restarted("c", Duration::from_secs(1), POLICY);
        // The instance started then ran 5 s: the 10 s wait runs from its end.
        let exited = started + Duration::from_secs(5);
        let now = started + Duration::from_secs(12);
        assert_eq!(
            backoff.wait_after_exit("c", exited, now),
            Err(Duration::from_secs(3))
        );
        assert_eq!(
            backoff.next_expiry(now),
            Some(exited + Duration::from_secs(10)),
            "a sync is due when it ends"
        );
        assert!(backoff
            .wait_after_exit("c", exited, exited + Duration::from_secs(10))
            .is_ok());
    }

    #[test]
    fn a_fresh_container_owes_nothing_then_backs_off_from_the_start_and_is_not_resumed() {
        let mut backoff = Backoff::default();
        let now = Instant::now();
        backoff.fresh("c");
        assert!(backoff.wait_after_exit("c", now, now).is_ok());
        backoff.resume("c", 9, POLICY);
        assert_eq!(
            backoff.delay("c"),
            Some(Duration::ZERO),
            "a restart count of the old spec is not this one's"
        );
        assert_eq!(
            backoff
                .restarted("c", Duration::from_secs(1), POLICY)
                .as_secs(),
            10
        );
        backoff.fresh("c");
        assert_eq!(
            backoff.delay("c"),
            Some(Duration::from_secs(10)),
            "a record is kept"
        );
    }

    #[test]
    fn a_failed_pull_waits_from_the_failure() {
        let mut backoff = Backoff::default();
        let t0 = Instant::now();
        assert!(backoff.check("image", t0).is_ok());
        assert_eq!(backoff.failed("image", t0, POLICY), Duration::from_secs(10));
        assert_eq!(
            backoff.check("image", t0 + Duration::from_secs(4)),
            Err(Duration::from_secs(6))
        );
        assert_eq!(backoff.failed("image", t0, POLICY), Duration::from_secs(20));
        assert!(backoff.check("image", t0 + Duration::from_secs(20)).is_ok());
    }

    #[test]
    fn a_restarted_agent_resumes_the_back_off_from_the_restart_count() {
        let policy = BackoffPolicy {
            initial: Duration::from_secs(10),
            max: Duration::from_secs(300),
        };
        let now = Instant::now();
        let exited = now - Duration::from_secs(5);
        let mut backoff = Backoff::default();
        backoff.resume("c", 3, policy);
        assert_eq!(backoff.delay("c"), Some(Duration::from_secs(40)));
        assert_eq!(
            backoff.wait_after_exit("c", exited, now),
            Err(Duration::from_secs(35))
        );
        backoff.resume("fresh", 0, policy);
        assert!(
            backoff.wait_after_exit("fresh", exited, now).is_ok(),
            "a first crash restarts at once"
        );
        backoff.resume("c", 9, policy);
        assert_eq!(
            backoff.delay("c"),
            Some(Duration::from_secs(40)),
            "an actor's own record wins"
        );
    }
}
