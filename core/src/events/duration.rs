//! Durations written as Go writes them (`523ms`, `1.234s`, `1m2.5s`), for the event messages
//! that upstream formats with Go's `time.Duration`.

use std::time::Duration;

/// `duration` truncated to milliseconds, as Go's `Duration.String()` prints it.
#[must_use]
pub fn go_millis(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis == 0 {
        return "0s".to_owned();
    }
    if millis < 1000 {
        return format!("{millis}ms");
    }
    let (hours, rest) = (millis / 3_600_000, millis % 3_600_000);
    let (minutes, rest) = (rest / 60_000, rest % 60_000);
    let (seconds, fraction) = (rest / 1000, rest % 1000);
    let fraction = if fraction == 0 {
        String::new()
    } else {
        format!(".{fraction:03}").trim_end_matches('0').to_owned()
    };
    let seconds = format!("{seconds}{fraction}s");
    match (hours, minutes) {
        (0, 0) => seconds,
        (0, m) => format!("{m}m{seconds}"),
        (h, m) => format!("{h}h{m}m{seconds}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_as_go_writes_them() {
        let ms = Duration::from_millis;
        assert_eq!(go_millis(Duration::from_micros(900)), "0s");
        assert_eq!(go_millis(ms(523)), "523ms");
        assert_eq!(go_millis(ms(1234)), "1.234s");
        assert_eq!(go_millis(ms(1200)), "1.2s");
        assert_eq!(go_millis(ms(2000)), "2s");
        assert_eq!(go_millis(ms(61_500)), "1m1.5s");
        assert_eq!(go_millis(ms(3_600_000)), "1h0m0s");
    }
}
