//! Times as the kubelet writes them: Go's duration format in messages, RFC 3339 in records.

use std::time::{Duration, SystemTime};

use k8s_openapi::jiff::Timestamp;

/// Formats a duration as Go does for whole seconds and minutes (`10s`, `5m0s`), as upstream's
/// back-off messages show them.
#[must_use]
pub fn go_duration(duration: Duration) -> String {
    let secs = duration.as_secs();
    if secs >= 60 {
        format!("{}m{}s", secs / 60, secs % 60)
    } else {
        format!("{secs}s")
    }
}

/// `time` in UTC, formatted with `strftime`-style `format` (jiff's directives).
#[must_use]
pub fn format_utc(time: SystemTime, format: &str) -> String {
    timestamp(time).strftime(format).to_string()
}

/// `time` as a jiff timestamp; the epoch for a time before it or out of range.
fn timestamp(time: SystemTime) -> Timestamp {
    let nanos = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    i128::try_from(nanos)
        .ok()
        .and_then(|nanos| Timestamp::from_nanosecond(nanos).ok())
        .unwrap_or(Timestamp::UNIX_EPOCH)
}

/// Formats a wall-clock time as RFC 3339 in UTC with millisecond precision
/// (`2023-11-14T22:13:20.123Z`), as sergeant's own records (failures, reloads) show times.
#[must_use]
pub fn rfc3339_millis(time: SystemTime) -> String {
    format_utc(time, "%Y-%m-%dT%H:%M:%S%.3fZ")
}

/// Formats a wall-clock time as upstream's kubelet writes the time it first saw a pod
/// (`kubernetes.io/config.seen`, Go's `RFC3339NanoFixed`): nine fractional digits, always
/// (`2023-11-14T22:13:20.123000000Z`). In UTC; upstream writes the node's local zone, which is
/// UTC on most nodes and the same instant on any.
#[must_use]
pub fn rfc3339_nanos_fixed(time: SystemTime) -> String {
    format_utc(time, "%Y-%m-%dT%H:%M:%S%.9fZ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_millis_formats_known_instants() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
        assert_eq!(rfc3339_millis(t), "2023-11-14T22:13:20.123Z");
        assert_eq!(
            rfc3339_millis(SystemTime::UNIX_EPOCH),
            "1970-01-01T00:00:00.000Z"
        );
        let leap = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339_millis(leap), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn rfc3339_nanos_fixed_always_has_nine_fractional_digits() {
        let at = |nanos: u64| SystemTime::UNIX_EPOCH + Duration::from_nanos(nanos);
        for (time, shown) in [
            (
                at(1_700_000_000_123_456_789),
                "2023-11-14T22:13:20.123456789Z",
            ),
            (
                at(1_700_000_000_120_000_000),
                "2023-11-14T22:13:20.120000000Z",
            ),
            (
                at(1_700_000_000_000_000_001),
                "2023-11-14T22:13:20.000000001Z",
            ),
            (SystemTime::UNIX_EPOCH, "1970-01-01T00:00:00.000000000Z"),
        ] {
            assert_eq!(rfc3339_nanos_fixed(time), shown);
        }
    }

    #[test]
    fn durations_read_as_go_prints_them() {
        assert_eq!(go_duration(Duration::from_secs(10)), "10s");
        assert_eq!(go_duration(Duration::from_secs(300)), "5m0s");
        assert_eq!(go_duration(Duration::from_secs(75)), "1m15s");
    }
}
