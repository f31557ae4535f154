//! The doubling delay between attempts that keep failing (the API server is away), reset by
//! the first success.

use std::time::Duration;

/// The delay of the next attempt after a failure.
#[derive(Debug, Clone)]
pub struct Retry {
    first: Duration,
    max: Duration,
    next: Duration,
}

impl Retry {
    /// Waits `first` after the first failure, twice as long after each further one, at most
    /// `max`.
    #[must_use]
    pub fn new(first: Duration, max: Duration) -> Self {
        Self {
            first,
            max,
            next: first,
        }
    }

    /// The wait after one more failure.
    pub fn failed(&mut self) -> Duration {
        let delay = self.next.min(self.max);
        self.next = self.next.saturating_mul(2).min(self.max);
        delay
    }

    /// Starts over after a success.
    pub fn succeeded(&mut self) {
        self.next = self.first;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delay_doubles_to_the_cap_and_a_success_resets_it() {
        let mut retry = Retry::new(Duration::from_millis(200), Duration::from_millis(700));
        let delays: Vec<u128> = (0..4).map(|_| retry.failed().as_millis()).collect();
        assert_eq!(delays, [200, 400, 700, 700]);
        retry.succeeded();
        assert_eq!(retry.failed(), Duration::from_millis(200));
    }
}
