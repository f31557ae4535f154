//! What a process costs, as `/proc` tells it: its resident memory and the CPU time it used over
//! a window. Shared by the benchmarks that report an agent's footprint.

use std::fs;
use std::time::Duration;

/// Clock ticks per second of `/proc/<pid>/stat`'s CPU times (`USER_HZ`).
const TICKS_PER_SECOND: f64 = 100.0;

/// The resident set size of `pid`, in KiB (0 when it cannot be read).
pub fn rss_kib(pid: u32) -> u64 {
    fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// User + system CPU time of `pid`, in clock ticks (0 when it cannot be read).
pub fn cpu_ticks(pid: u32) -> u64 {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after_name = stat.rsplit(')').next().unwrap_or_default();
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(11) + field(12)
}

/// The CPU time `pids` used together while `window` passes, in percent of one core.
pub fn cpu_percent(pids: &[u32], window: Duration) -> f64 {
    let ticks = || pids.iter().map(|&pid| cpu_ticks(pid)).sum::<u64>();
    let before = ticks();
    std::thread::sleep(window);
    let used = ticks().saturating_sub(before);
    #[allow(clippy::cast_precision_loss)]
    let seconds = used as f64 / TICKS_PER_SECOND;
    seconds / window.as_secs_f64() * 100.0
}
