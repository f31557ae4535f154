//! [`TokenBucket`]: client-go's token-bucket rate limiter (flowcontrol, on golang.org/x/time's
//! `rate.Limiter`): `qps` tokens a second, at most `burst` saved up, full at the start. The
//! kubelet limits its API requests (`kubeAPIQPS`/`kubeAPIBurst`, waiting for a token) and its
//! image pulls (`registryPullQPS`/`registryBurst`, refused without one) with it.

use std::time::{Duration, Instant};

/// A token bucket; the caller passes the time, so it is pure and testable.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    qps: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    /// A full bucket of `burst` tokens refilled at `qps` a second (`qps` > 0).
    #[must_use]
    pub fn new(qps: f64, burst: u32, now: Instant) -> Self {
        TokenBucket {
            qps,
            burst: f64::from(burst),
            tokens: f64::from(burst),
            last: now,
        }
    }

    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.qps).min(self.burst);
        self.last = self.last.max(now);
    }

    /// Takes a token if one is there now (client-go's `TryAccept`).
    pub fn try_take(&mut self, now: Instant) -> bool {
        self.refill(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Takes the next token, now or in the future, and says how long to wait for it (client-go's
    /// `Accept`/`Wait`: callers queue in order of their reservations).
    pub fn reserve(&mut self, now: Instant) -> Duration {
        self.refill(now);
        self.tokens -= 1.0;
        if self.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-self.tokens / self.qps)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_passes_then_tokens_come_at_the_rate() {
        let start = Instant::now();
        let mut bucket = TokenBucket::new(2.0, 3, start);
        assert!((0..3).all(|_| bucket.try_take(start)));
        assert!(!bucket.try_take(start));
        assert!(!bucket.try_take(start + Duration::from_millis(400)));
        assert!(bucket.try_take(start + Duration::from_millis(500)));
        // Saved tokens never exceed the burst.
        let later = start + Duration::from_secs(60);
        assert!((0..3).all(|_| bucket.try_take(later)));
        assert!(!bucket.try_take(later));
    }

    #[test]
    fn reservations_queue_behind_each_other() {
        let start = Instant::now();
        let mut bucket = TokenBucket::new(10.0, 2, start);
        assert_eq!(bucket.reserve(start), Duration::ZERO);
        assert_eq!(bucket.reserve(start), Duration::ZERO);
        let third = bucket.reserve(start);
        let fourth = bucket.reserve(start);
        assert!((third.as_secs_f64() - 0.1).abs() < 1e-9, "{third:?}");
        assert!((fourth.as_secs_f64() - 0.2).abs() < 1e-9, "{fourth:?}");
    }
}
