//! The `priority_bucket` label of upstream's pending-resize metrics: a pod's priority in six
//! bands, so that a metric tells system-critical pods' waiting resizes from the others'
//! without a series per priority.

/// The priority from which a pod is system-critical (upstream's `SystemCriticalPriority`).
const SYSTEM_CRITICAL: i32 = 2_000_000_000;

/// The band of a pod of priority `priority` (`None`: it has none, which counts as 0).
#[must_use]
pub fn priority_bucket(priority: Option<i32>) -> &'static str {
    match priority.unwrap_or(0) {
        0 => "normal",
        p if p >= SYSTEM_CRITICAL => "system-critical",
        p if p >= 100_000 => "high",
        p if p > 0 => "medium",
        p if p > -1000 => "low",
        _ => "very-low",
    }
}

#[cfg(test)]
mod tests {
    use super::priority_bucket;

    #[test]
    fn priorities_fall_in_upstreams_bands() {
        let cases = [
            (None, "normal"),
            (Some(0), "normal"),
            (Some(2_000_001_000), "system-critical"),
            (Some(2_000_000_000), "system-critical"),
            (Some(1_999_999_999), "high"),
            (Some(100_000), "high"),
            (Some(99_999), "medium"),
            (Some(1), "medium"),
            (Some(-1), "low"),
            (Some(-999), "low"),
            (Some(-1000), "very-low"),
        ];
        for (priority, band) in cases {
            assert_eq!(priority_bucket(priority), band, "{priority:?}");
        }
    }
}
