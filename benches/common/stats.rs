//! Summaries of measured durations, shared by the benchmarks: [`percentile`].

use std::time::Duration;

/// The `p` percentile (0..=1, nearest rank) of `sorted` durations, in milliseconds; NaN when
/// there are none. The one percentile every benchmark reports.
pub fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1].as_secs_f64() * 1e3
}
