//! What the tests read of the machine themselves, to hold sergeant's report against: the
//! logical CPUs the kernel has online.
//!
//! Entry point: [`online_cpus`].

/// Where Linux lists the online CPUs, as ranges (`0-3,6,8-11`).
const ONLINE: &str = "/sys/devices/system/cpu/online";

/// How many logical CPUs the kernel has online: the machine's, whatever this process's
/// affinity or cgroup quota allows it.
pub fn online_cpus() -> i64 {
    let text = std::fs::read_to_string(ONLINE).unwrap_or_else(|e| panic!("{ONLINE}: {e}"));
    text.trim()
        .split(',')
        .map(|range| {
            let (first, last) = range.split_once('-').unwrap_or((range, range));
            let number = |n: &str| -> i64 {
                n.parse()
                    .unwrap_or_else(|e| panic!("{ONLINE}: {text:?}: {e}"))
            };
            number(last) - number(first) + 1
        })
        .sum()
}
