//! A container's cpu and memory limits as Windows job-object limits.
//!
//! Upstream's Windows kubelet maps only limits: the cpu limit becomes a hard cap
//! (`cpu_maximum`, in hundredths of a percent of the whole node, 1 to 10000), the memory limit
//! `memory_limit_in_bytes`. It sets neither `cpu_shares` (a weight would disable the cap: the
//! two are exclusive on a job object) nor `cpu_count`, so neither is set here.

use k8s_cri::v1::WindowsContainerResources;

use super::super::quantity::Amounts;

/// The largest `cpu_maximum`: the whole node.
const CPU_MAXIMUM_CEILING: i64 = 10_000;

/// The job-object resources of a container with `limits` on a node of `processors` logical
/// processors: `cpu_maximum` from a cpu limit, `memory_limit_in_bytes` from a memory limit,
/// everything else zero (unset).
#[must_use]
pub fn windows_resources(limits: &Amounts, processors: u32) -> WindowsContainerResources {
    WindowsContainerResources {
        cpu_maximum: limits
            .cpu_milli
            .map_or(0, |milli| cpu_maximum(milli, processors)),
        memory_limit_in_bytes: limits.memory_bytes.unwrap_or(0),
        ..Default::default()
    }
}

/// The share of the node a cpu limit of `limit_milli` millicores is, in hundredths of a
/// percent (`10 * millicores / processors`), kept within 1..=10000 as upstream keeps it: a
/// limit smaller than one step still caps at the smallest step, a limit above the node's size
/// caps at the whole node. A node reporting no processors counts as one.
#[must_use]
pub fn cpu_maximum(limit_milli: i64, processors: u32) -> i64 {
    let processors = i64::from(processors.max(1));
    // An overflowing product is far above the ceiling.
    let share = limit_milli
        .checked_mul(10)
        .map_or(CPU_MAXIMUM_CEILING, |tenths| tenths / processors);
    share.clamp(1, CPU_MAXIMUM_CEILING)
}
