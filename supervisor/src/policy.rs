//! How often and how fast a supervisor restarts its children: exponential backoff and the
//! restart-intensity window.

use sergeant_core::backoff::Doubling;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The restart policy of one supervisor, applied to each of its children.
///
/// The defaults are the ones operators expect from an OTP-style supervisor tuned for a node
/// agent: 100 ms doubling to 30 s, reset after a minute of quiet, at most 5 restarts a minute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestartPolicy {
    /// Delay before the first restart after a quiet period.
    pub backoff_initial: Duration,
    /// Upper bound of the doubling delay.
    pub backoff_max: Duration,
    /// A child that ran this long before failing starts again from `backoff_initial`.
    pub backoff_reset_after: Duration,
    /// At most this many restarts of one child within `intensity_period`…
    pub intensity: u32,
    /// …past which the supervisor gives the child up and escalates.
    pub intensity_period: Duration,
    /// How long one child may take to stop before it is aborted.
    pub shutdown_timeout: Duration,
    /// How long a message to a restarting child waits for it before failing with a typed error.
    pub delivery_timeout: Duration,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        Self {
            backoff_initial: Duration::from_millis(100),
            backoff_max: Duration::from_secs(30),
            backoff_reset_after: Duration::from_secs(60),
            intensity: 5,
            intensity_period: Duration::from_secs(60),
            shutdown_timeout: Duration::from_secs(5),
            delivery_timeout: Duration::from_secs(2),
        }
    }
}

impl RestartPolicy {
    /// The policy an operator set in the `supervision` block of `SergeantConfiguration`.
    #[must_use]
    pub fn from_config(supervision: &sergeant_config::sergeant::Supervision) -> Self {
        Self {
            backoff_initial: supervision.backoff_initial.as_std(),
            backoff_max: supervision.backoff_max.as_std(),
            backoff_reset_after: supervision.backoff_reset_after.as_std(),
            intensity: supervision.restart_intensity,
            intensity_period: supervision.restart_period.as_std(),
            shutdown_timeout: supervision.shutdown_timeout.as_std(),
            delivery_timeout: supervision.delivery_timeout.as_std(),
        }
    }
}

/// The doubling restart delay of one child.
#[derive(Debug, Clone)]
pub(crate) struct Backoff {
    reset_after: Duration,
    delay: Doubling,
}

impl Backoff {
    pub(crate) fn new(policy: &RestartPolicy) -> Self {
        Self {
            reset_after: policy.backoff_reset_after,
            delay: Doubling::new(policy.backoff_initial, policy.backoff_max),
        }
    }

    /// The delay before the next restart of a child that ran for `ran_for` before failing.
    pub(crate) fn delay(&mut self, ran_for: Duration) -> Duration {
        if ran_for >= self.reset_after {
            self.delay.reset();
        }
        self.delay.next_delay()
    }
}

/// The restarts of one child within the sliding intensity period.
#[derive(Debug, Clone)]
pub(crate) struct IntensityWindow {
    limit: u32,
    period: Duration,
    restarts: VecDeque<Instant>,
}

impl IntensityWindow {
    pub(crate) fn new(policy: &RestartPolicy) -> Self {
        Self {
            limit: policy.intensity,
            period: policy.intensity_period,
            restarts: VecDeque::new(),
        }
    }

    /// Records a wanted restart at `now`; false when it would exceed the limit.
    pub(crate) fn admit(&mut self, now: Instant) -> bool {
        while let Some(&oldest) = self.restarts.front() {
            if now.duration_since(oldest) < self.period {
                break;
            }
            self.restarts.pop_front();
        }
        self.restarts.push_back(now);
        self.restarts.len() <= self.limit as usize
    }

    /// The limit and period, for the give-up message.
    pub(crate) fn describe(&self) -> String {
        format!("{} restarts in {:?}", self.limit, self.period)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_the_cap_and_resets_after_a_quiet_run() {
        let policy = RestartPolicy {
            backoff_initial: Duration::from_millis(100),
            backoff_max: Duration::from_millis(350),
            backoff_reset_after: Duration::from_secs(10),
            ..RestartPolicy::default()
        };
        let mut backoff = Backoff::new(&policy);
        let short = Duration::from_millis(1);
        let delays: Vec<u128> = (0..4).map(|_| backoff.delay(short).as_millis()).collect();
        assert_eq!(delays, vec![100, 200, 350, 350]);
        assert_eq!(backoff.delay(Duration::from_secs(10)).as_millis(), 100);
    }

    #[test]
    fn intensity_admits_the_limit_then_refuses_until_the_window_slides() {
        let policy = RestartPolicy {
            intensity: 2,
            intensity_period: Duration::from_secs(60),
            ..RestartPolicy::default()
        };
        let mut window = IntensityWindow::new(&policy);
        let start = Instant::now();
        assert!(window.admit(start));
        assert!(window.admit(start + Duration::from_secs(1)));
        assert!(!window.admit(start + Duration::from_secs(2)));
        assert!(window.admit(start + Duration::from_secs(120)));
    }
}
