//! Windows-shaped usage of the fake runtime, for the containers of Windows pods (a sandbox
//! whose config has a Windows half): what a Windows runtime reports, which has no RSS and no
//! major page faults but a commit charge. The numbers are made up and fixed, so a test can
//! check them exactly: a running container uses one millicore (reported as a rate too, as
//! Windows runtimes do), a private working set of [`super::stats::WORKING_SET_BYTES`] and a commit charge of
//! [`COMMIT_BYTES`]; a stopped one nothing. Its pod is the sum of its containers, with one
//! network interface ([`INTERFACE`]) that has moved nothing and a process per running
//! container.
//!
//! Entry points: [`container`], [`list_entry`] and [`pod`].

use sergeant_messages::runtime::cri;

use super::container::Container;
use super::stats::{attributes, sample, used, value, NANO_CORES};

/// The commit charge a running hollow Windows container is said to have: above its working
/// set, as on Windows, where commit counts the private memory paged out too.
pub(super) const COMMIT_BYTES: u64 = 6 * 1024 * 1024;

/// The name of the one network interface a hollow Windows pod is said to have.
pub(super) const INTERFACE: &str = "fake0";

/// The Windows usage of one container at `now`.
pub(super) fn container(id: &str, container: &Container, now: i64) -> cri::WindowsContainerStats {
    let (core_nanos, working_set) = used(container, now);
    let running = working_set > 0;
    cri::WindowsContainerStats {
        attributes: Some(attributes(id, container)),
        cpu: Some(cri::WindowsCpuUsage {
            timestamp: now,
            usage_core_nano_seconds: value(core_nanos),
            usage_nano_cores: value(if running { NANO_CORES } else { 0 }),
        }),
        memory: Some(cri::WindowsMemoryUsage {
            timestamp: now,
            working_set_bytes: value(working_set),
            available_bytes: value(0),
            page_faults: value(0),
            commit_memory_bytes: value(if running { COMMIT_BYTES } else { 0 }),
        }),
        writable_layer: None,
    }
}

/// The `ListContainerStats` entry of one container at `now`, in the shape Windows runtimes
/// fill its common fields: the commit charge as the usage, the rate given, no RSS, no major
/// page faults, no writable layer.
pub(super) fn list_entry(id: &str, container: &Container, now: i64) -> cri::ContainerStats {
    let windows = self::container(id, container, now);
    let mut entry = sample(id, container, now);
    if let Some(cpu) = entry.cpu.as_mut() {
        cpu.usage_nano_cores = windows.cpu.and_then(|cpu| cpu.usage_nano_cores);
    }
    if let Some(memory) = entry.memory.as_mut() {
        memory.usage_bytes = windows.memory.and_then(|m| m.commit_memory_bytes);
        memory.rss_bytes = None;
        memory.major_page_faults = None;
    }
    entry.writable_layer = None;
    entry
}

/// The Windows half of a pod's stats at `now`: the sums of its `containers`.
pub(super) fn pod(
    containers: Vec<cri::WindowsContainerStats>,
    now: i64,
) -> cri::WindowsPodSandboxStats {
    let sum = |pick: fn(&cri::WindowsContainerStats) -> Option<u64>| {
        value(
            containers
                .iter()
                .filter_map(pick)
                .fold(0, u64::saturating_add),
        )
    };
    let running = containers
        .iter()
        .filter(|c| {
            c.cpu
                .as_ref()
                .and_then(|cpu| cpu.usage_nano_cores)
                .is_some_and(|v| v.value > 0)
        })
        .count();
    cri::WindowsPodSandboxStats {
        cpu: Some(cri::WindowsCpuUsage {
            timestamp: now,
            usage_core_nano_seconds: sum(|c| Some(c.cpu?.usage_core_nano_seconds?.value)),
            usage_nano_cores: sum(|c| Some(c.cpu?.usage_nano_cores?.value)),
        }),
        memory: Some(cri::WindowsMemoryUsage {
            timestamp: now,
            working_set_bytes: sum(|c| Some(c.memory.as_ref()?.working_set_bytes?.value)),
            available_bytes: value(0),
            page_faults: sum(|c| Some(c.memory.as_ref()?.page_faults?.value)),
            commit_memory_bytes: sum(|c| Some(c.memory.as_ref()?.commit_memory_bytes?.value)),
        }),
        network: Some(cri::WindowsNetworkUsage {
            timestamp: now,
            default_interface: Some(interface()),
            interfaces: vec![interface()],
        }),
        process: Some(cri::WindowsProcessUsage {
            timestamp: now,
            process_count: value(u64::try_from(running).unwrap_or(u64::MAX)),
        }),
        containers,
    }
}

/// The pod's one interface, which has moved nothing.
fn interface() -> cri::WindowsNetworkInterfaceUsage {
    cri::WindowsNetworkInterfaceUsage {
        name: INTERFACE.to_owned(),
        rx_bytes: value(0),
        rx_packets_dropped: value(0),
        tx_bytes: value(0),
        tx_packets_dropped: value(0),
    }
}
