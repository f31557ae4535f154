//! [`Doubling`]: the delay before trying again after a failure, doubling up to a bound and
//! starting over after a success. The one rule behind every retry pause of the agent (runtime
//! health polls, node status writes, API retries, accept pauses, supervisor restarts).

use std::time::Duration;

/// A doubling delay between attempts that keep failing.
///
/// It exists so that every place that retries paces itself by the same rule: the first wait is
/// `first`, each next one twice the one before, never more than `max`, and a success (the
/// caller's [`Doubling::reset`]) starts over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doubling {
    first: Duration,
    max: Duration,
    next: Duration,
}

impl Doubling {
    /// Waits `first` after the first failure, doubling up to `max`.
    #[must_use]
    pub const fn new(first: Duration, max: Duration) -> Self {
        Self {
            first,
            max,
            next: first,
        }
    }

    /// The wait after one more failure; the one after it is twice as long, up to `max`.
    pub fn next_delay(&mut self) -> Duration {
        let delay = self.next.min(self.max);
        self.next = self.next.saturating_mul(2).min(self.max);
        delay
    }

    /// Starts over from `first`: the last attempt succeeded.
    pub fn reset(&mut self) {
        self.next = self.first;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delay_doubles_to_the_bound_and_a_reset_starts_over() {
        let mut delay = Doubling::new(Duration::from_millis(200), Duration::from_millis(700));
        let delays: Vec<u128> = (0..4).map(|_| delay.next_delay().as_millis()).collect();
        assert_eq!(delays, [200, 400, 700, 700]);
        delay.reset();
        assert_eq!(delay.next_delay(), Duration::from_millis(200));
    }

    #[test]
    fn a_first_above_the_bound_waits_the_bound() {
        let mut delay = Doubling::new(Duration::from_secs(5), Duration::from_secs(1));
        assert_eq!(delay.next_delay(), Duration::from_secs(1));
    }

    #[test]
    fn doubling_saturates_instead_of_overflowing() {
        let mut delay = Doubling::new(Duration::MAX, Duration::MAX);
        assert_eq!(delay.next_delay(), Duration::MAX);
        assert_eq!(delay.next_delay(), Duration::MAX);
    }
}
