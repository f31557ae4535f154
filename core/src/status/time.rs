//! Runtime timestamps as API times.

use std::time::{SystemTime, UNIX_EPOCH};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

/// A CRI timestamp (nanoseconds since the Unix epoch) as an API time. The runtime writes 0 for
/// "never" (a container not started or not finished yet): that, a negative value or one out of
/// range gives `None`.
pub(super) fn from_cri(nanos: i64) -> Option<Time> {
    if nanos <= 0 {
        return None;
    }
    Timestamp::from_nanosecond(i128::from(nanos)).ok().map(Time)
}

/// The wall clock as an API time (the Unix epoch if the clock is set before it).
pub(super) fn now() -> Time {
    at(SystemTime::now())
}

/// A wall-clock instant as an API time (the Unix epoch for an instant before it).
pub fn at(instant: SystemTime) -> Time {
    let nanos = instant
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    let timestamp = i128::try_from(nanos)
        .ok()
        .and_then(|nanos| Timestamp::from_nanosecond(nanos).ok());
    Time(timestamp.unwrap_or(Timestamp::UNIX_EPOCH))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanoseconds_become_the_same_instant() {
        let time = from_cri(1_700_000_000_123_456_789).map(|t| t.0);
        assert_eq!(time.map(|t| t.as_second()), Some(1_700_000_000));
        assert_eq!(time.map(|t| t.subsec_nanosecond()), Some(123_456_789));
    }

    #[test]
    fn now_is_after_2020() {
        assert!(now().0.as_second() > 1_577_836_800);
    }

    #[test]
    fn zero_means_never() {
        assert_eq!(from_cri(0), None);
        assert_eq!(from_cri(-5), None);
    }
}
