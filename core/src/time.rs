//! Times as the kubelet writes them: Go's duration format in messages.

use std::time::Duration;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_go_prints_them() {
        assert_eq!(go_duration(Duration::from_secs(10)), "10s");
        assert_eq!(go_duration(Duration::from_secs(300)), "5m0s");
        assert_eq!(go_duration(Duration::from_secs(75)), "1m15s");
    }
}
