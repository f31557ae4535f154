//! CPU rates (`usageNanoCores`) from cumulative CPU time: the rate between a sample and the
//! previous one kept for the same key (the node, or a container id), as the upstream kubelet
//! computes it for runtimes that report only cumulative time.

use std::collections::HashMap;

/// Samples closer than this to the kept one do not replace it: the rate over a few
/// milliseconds is noise, so a quick second request gets the last rate instead.
const MIN_INTERVAL_NS: i64 = 1_000_000_000;

/// The key of the node's own CPU sample.
pub const NODE: &str = "";

/// The last sample of one key and the rate it gave.
#[derive(Debug, Clone, Copy)]
struct Kept {
    at_ns: i64,
    usage_core_nanos: u64,
    rate: Option<u64>,
}

/// The previous CPU sample of the node and of every container seen.
#[derive(Debug, Default)]
pub struct CpuRates {
    kept: HashMap<String, Kept>,
}

impl CpuRates {
    /// The CPU rate of `key` in nanocores, given its cumulative usage at `at_ns`; `None` until
    /// there are two samples far enough apart, or after the counter went back (a restart).
    pub fn rate(&mut self, key: &str, at_ns: i64, usage_core_nanos: u64) -> Option<u64> {
        let fresh = Kept {
            at_ns,
            usage_core_nanos,
            rate: None,
        };
        let Some(kept) = self.kept.get_mut(key) else {
            self.kept.insert(key.to_string(), fresh);
            return None;
        };
        let elapsed = at_ns.saturating_sub(kept.at_ns);
        if (0..MIN_INTERVAL_NS).contains(&elapsed) && usage_core_nanos >= kept.usage_core_nanos {
            return kept.rate;
        }
        if elapsed <= 0 || usage_core_nanos < kept.usage_core_nanos {
            *kept = fresh;
            return None;
        }
        let used = u128::from(usage_core_nanos - kept.usage_core_nanos);
        let elapsed = u128::try_from(elapsed).unwrap_or(u128::MAX);
        let rate = u64::try_from(used * 1_000_000_000 / elapsed).unwrap_or(u64::MAX);
        *kept = Kept {
            rate: Some(rate),
            ..fresh
        };
        Some(rate)
    }

    /// Forgets every key but the node's and `live` ones, so removed containers do not pile up.
    pub fn retain<'a>(&mut self, live: impl IntoIterator<Item = &'a str>) {
        let live: std::collections::HashSet<&str> = live.into_iter().collect();
        self.kept
            .retain(|key, _| key == NODE || live.contains(key.as_str()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: i64 = 1_000_000_000;
    const CORE_SECOND: u64 = 1_000_000_000;

    #[test]
    fn the_rate_is_the_usage_over_the_interval() {
        let mut rates = CpuRates::default();
        assert_eq!(rates.rate("c", 10 * SECOND, 1_000), None);
        // Half a core for two seconds.
        assert_eq!(
            rates.rate("c", 12 * SECOND, 1_000 + 1_000_000_000),
            Some(500_000_000)
        );
        // Two cores for one second, from the last sample.
        assert_eq!(
            rates.rate("c", 13 * SECOND, 1_000 + 3_000_000_000),
            Some(2_000_000_000)
        );
    }

    #[test]
    fn a_sample_too_close_gives_the_last_rate_and_keeps_the_baseline() {
        let mut rates = CpuRates::default();
        rates.rate("c", 0, 0);
        assert_eq!(rates.rate("c", SECOND / 10, 50), None);
        assert_eq!(
            rates.rate("c", 2 * SECOND, CORE_SECOND),
            Some(CORE_SECOND / 2)
        );
        assert_eq!(
            rates.rate("c", 2 * SECOND + 10, 10 * CORE_SECOND),
            Some(CORE_SECOND / 2)
        );
    }

    #[test]
    fn a_counter_that_went_back_restarts_the_rate() {
        let mut rates = CpuRates::default();
        rates.rate("c", 0, 5_000);
        assert_eq!(rates.rate("c", 2 * SECOND, 10), None);
        assert_eq!(
            rates.rate("c", 4 * SECOND, 10 + 2 * SECOND as u64),
            Some(SECOND as u64)
        );
    }

    #[test]
    fn retain_forgets_gone_containers_but_not_the_node() {
        let mut rates = CpuRates::default();
        rates.rate(NODE, 0, 0);
        rates.rate("gone", 0, 0);
        rates.rate("live", 0, 0);
        rates.retain(["live"]);
        assert_eq!(rates.rate("gone", 2 * SECOND, 0), None);
        assert_eq!(rates.rate("live", 2 * SECOND, 0), Some(0));
        assert_eq!(rates.rate(NODE, 2 * SECOND, 0), Some(0));
    }
}
