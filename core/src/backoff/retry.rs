//! [`RetryBackoff`]: how long to wait before calling the API server again after a call failed,
//! a jittered [`Doubling`]. `sergeant_kube_api`'s watches and reads retry by it, and so do the
//! actors' own calls (the status manager's writes, the mirror-pods actor's read of the Node).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use super::Doubling;

/// A bounded, jittered exponential back-off for retries against the API server.
///
/// It exists because a node agent's retries have two duties that pull apart: not to hammer an
/// API server that is down or overloaded (thousands of nodes retry at once after an outage),
/// and to come back fast once it answers again, since pods bound to the node in the meantime
/// wait for it. Upstream's reflector (and kube-runtime's default watcher back-off) doubles
/// from 800 ms up to 30 s, adds up to as much again as jitter, and resets only after two
/// minutes without a failure: after a one-minute outage a watch could sleep up to a minute
/// past the API server's return, and a 410 relist could add another. Here the step doubles
/// from `first` up to a small `max` (seconds, not tens of seconds), the caller resets it on
/// the first success, and each delay is drawn uniformly from the upper half of the step
/// ("equal jitter"): the agent never retries faster than `step / 2`, so the load stays
/// bounded, while a fleet of nodes spreads its retries instead of arriving in lockstep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryBackoff {
    step: Doubling,
}

impl RetryBackoff {
    /// A back-off whose first delay is at most `first`, doubling up to `max`.
    #[must_use]
    pub const fn new(first: Duration, max: Duration) -> Self {
        Self {
            step: Doubling::new(first, max),
        }
    }

    /// The delay before the next attempt; the one after it will be longer, up to `max`.
    pub fn next_delay(&mut self) -> Duration {
        let step = self.step.next_delay();
        step / 2 + (step / 2).mul_f64(random_fraction())
    }

    /// Starts over from `first`: the last call succeeded.
    pub fn reset(&mut self) {
        self.step.reset();
    }
}

/// A number in `[0, 1)`, random enough to spread retries: each `RandomState` is freshly
/// keyed, so hashing nothing with it yields unpredictable bits without a random number crate.
fn random_fraction() -> f64 {
    let bits = RandomState::new().build_hasher().finish() >> 11;
    bits as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_within_their_jitter_up_to_the_bound_and_reset() {
        let (first, max) = (Duration::from_millis(200), Duration::from_secs(2));
        let mut backoff = RetryBackoff::new(first, max);
        let mut step = first;
        for _ in 0..8 {
            let delay = backoff.next_delay();
            assert!(
                delay >= step / 2 && delay <= step,
                "{delay:?} within [{:?}, {step:?}]",
                step / 2
            );
            step = (step * 2).min(max);
        }
        assert_eq!(step, max, "the bound was reached");
        backoff.reset();
        assert!(backoff.next_delay() <= first, "back to the first step");
    }

    #[test]
    fn the_jitter_spreads_delays() {
        let mut delays: Vec<Duration> = (0..16)
            .map(|_| RetryBackoff::new(Duration::from_secs(1), Duration::from_secs(1)))
            .map(|mut b| b.next_delay())
            .collect();
        delays.dedup();
        assert!(delays.len() > 1, "not all the same: {delays:?}");
    }
}
