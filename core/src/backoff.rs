//! Back-off of things that keep failing: container restarts (CrashLoopBackOff) and image pulls
//! (ImagePullBackOff). How long the next attempt waits.
//!
//! As upstream: the first restart is immediate, each next one waits twice as long as the one
//! before (from the configured initial period up to the maximum), and a container that ran for
//! ten minutes before failing starts over. [`Doubling`] is the plain retry pause the agent's
//! other loops use.

mod doubling;

pub use doubling::Doubling;

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
    delay: Duration,
    until: Instant,
}

/// The back-off state of every container (or image) of one pod, by name.
#[derive(Debug, Clone, Default)]
pub struct Backoff {
    entries: BTreeMap<String, Entry>,
}

impl Backoff {
    /// Whether `container` may start now; `Err(remaining)` while it waits.
    ///
    /// # Errors
    /// The time left in the back-off.
    pub fn check(&self, container: &str, now: Instant) -> Result<(), Duration> {
        match self.entries.get(container) {
            Some(entry) if entry.until > now => Err(entry.until - now),
            _ => Ok(()),
        }
    }

    /// Records a restart of `container` at `now` after it ran for `ran_for`; returns the wait
    /// before the restart after this one.
    pub fn restarted(
        &mut self,
        container: &str,
        ran_for: Duration,
        now: Instant,
        policy: BackoffPolicy,
    ) -> Duration {
        let delay = match self.entries.get(container) {
            Some(entry) if ran_for < RESET_AFTER_RUNNING => (entry.delay * 2).min(policy.max),
            _ => policy.initial.min(policy.max),
        };
        self.entries.insert(
            container.to_owned(),
            Entry {
                delay,
                until: now + delay,
            },
        );
        delay
    }

    /// Rebuilds the back-off of a container found in the runtime by an actor that has no
    /// record of it (after sergeant restarted): an instance restarted `restarts` times and
    /// started `started_ago` waits as long as it would have, counted from its start.
    pub fn resume(
        &mut self,
        container: &str,
        restarts: u32,
        started_ago: Duration,
        now: Instant,
        policy: BackoffPolicy,
    ) {
        if restarts == 0 || self.entries.contains_key(container) {
            return;
        }
        let doublings = restarts.saturating_sub(1).min(31);
        let delay = policy
            .initial
            .saturating_mul(1 << doublings)
            .min(policy.max);
        let until = (now + delay).checked_sub(started_ago).unwrap_or(now);
        self.entries
            .insert(container.to_owned(), Entry { delay, until });
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
            .map(|e| e.until)
            .filter(|until| *until > now)
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_restart_is_immediate_then_waits_double_up_to_the_max() {
        let policy = BackoffPolicy {
            initial: Duration::from_secs(10),
            max: Duration::from_secs(35),
        };
        let mut backoff = Backoff::default();
        let t0 = Instant::now();
        assert!(backoff.check("c", t0).is_ok());
        let short = Duration::from_secs(1);
        let delays: Vec<u64> = (0..4)
            .map(|i| {
                backoff
                    .restarted("c", short, t0 + Duration::from_secs(i), policy)
                    .as_secs()
            })
            .collect();
        assert_eq!(delays, vec![10, 20, 35, 35]);
        assert_eq!(
            backoff.check("c", t0 + Duration::from_secs(4)),
            Err(Duration::from_secs(34))
        );
        assert!(backoff.check("other", t0).is_ok());
        assert_eq!(
            backoff
                .restarted("c", RESET_AFTER_RUNNING, t0, policy)
                .as_secs(),
            10,
            "a long run resets"
        );
    }

    #[test]
    fn a_restarted_agent_resumes_the_back_off_from_the_restart_count() {
        let policy = BackoffPolicy {
            initial: Duration::from_secs(10),
            max: Duration::from_secs(300),
        };
        let now = Instant::now();
        let mut backoff = Backoff::default();
        backoff.resume("c", 3, Duration::from_secs(5), now, policy);
        assert_eq!(backoff.delay("c"), Some(Duration::from_secs(40)));
        assert_eq!(backoff.check("c", now), Err(Duration::from_secs(35)));
        backoff.resume("fresh", 0, Duration::ZERO, now, policy);
        assert!(
            backoff.check("fresh", now).is_ok(),
            "a first crash restarts at once"
        );
        backoff.resume("c", 9, Duration::ZERO, now, policy);
        assert_eq!(
            backoff.delay("c"),
            Some(Duration::from_secs(40)),
            "an actor's own record wins"
        );
    }
}
