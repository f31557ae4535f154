//! Turns the planned pods, their CRI samples and host-side numbers into the summary's pod
//! entries: container CPU (with the rate, the runtime's or computed), memory, writable layer
//! and logs, and the pod's CPU, memory and network (the runtime's sandbox stats when it gave
//! them, as on Windows; else the containers' sums and the pod's network namespace) and
//! ephemeral storage.

use sergeant_messages::runtime::cri;

use sergeant_core::stats::summary::{ContainerStats, CpuStats, FsStats, MemoryStats, PodStats};
use sergeant_host::stats::fs::consumer;
use sergeant_host::stats::pods::{Host, PodHost};
use sergeant_host::stats::{time_of_ns, Clock};

use super::pods::{ContainerPlan, PodPlan};
use super::rate::CpuRates;

/// What the pod entries are built from besides the plans.
pub struct Inputs<'a> {
    /// The host-side numbers, by sandbox id.
    pub host: &'a Host,
    /// The node's filesystem, which ephemeral storage is counted against.
    pub root_fs: Option<&'a FsStats>,
    /// The kept CPU samples.
    pub rates: &'a mut CpuRates,
    /// The summary's instant.
    pub clock: Clock,
}

/// The pod entries of `plans`.
pub fn pods(plans: Vec<PodPlan>, inputs: Inputs<'_>) -> Vec<PodStats> {
    let Inputs {
        host,
        root_fs,
        rates,
        clock,
    } = inputs;
    let unknown = PodHost::default();
    plans
        .into_iter()
        .map(|plan| {
            let pod_host = host.pods.get(&plan.sandbox_id).unwrap_or(&unknown);
            let containers: Vec<ContainerStats> = plan
                .containers
                .iter()
                .map(|c| container(c, pod_host, &host.filesystems, rates, clock))
                .collect();
            let usage = plan.usage.unwrap_or_default();
            PodStats {
                cpu: usage.cpu.or_else(|| Some(cpu_sum(&containers, clock))),
                memory: usage
                    .memory
                    .or_else(|| Some(memory_sum(&containers, clock))),
                ephemeral_storage: root_fs.map(|fs| ephemeral(fs, &containers, pod_host)),
                volume: Some(pod_host.volumes.stats.clone()).filter(|v| !v.is_empty()),
                network: usage.network.or_else(|| pod_host.network.clone()),
                pod_ref: plan.pod_ref,
                start_time: plan.start_time,
                containers,
            }
        })
        .collect()
}

fn value(v: Option<&cri::UInt64Value>) -> Option<u64> {
    v.map(|v| v.value)
}

/// A sample's CRI timestamp, or the summary's instant when the runtime left it out (0).
fn sampled_at(timestamp: i64, clock: Clock) -> i64 {
    if timestamp > 0 {
        timestamp
    } else {
        clock.ns()
    }
}

fn container(
    plan: &ContainerPlan,
    host: &PodHost,
    filesystems: &std::collections::HashMap<String, FsStats>,
    rates: &mut CpuRates,
    clock: Clock,
) -> ContainerStats {
    let stats = plan.stats.as_ref();
    let cpu = stats.and_then(|s| s.cpu.as_ref()).map(|cpu| {
        let at = sampled_at(cpu.timestamp, clock);
        let usage = value(cpu.usage_core_nano_seconds.as_ref());
        let computed = usage.and_then(|u| rates.rate(&plan.id, at, u));
        let reported = value(cpu.usage_nano_cores.as_ref()).filter(|rate| *rate > 0);
        CpuStats {
            time: time_of_ns(at),
            usage_nano_cores: reported.or(computed),
            usage_core_nano_seconds: usage,
        }
    });
    let memory = stats.and_then(|s| s.memory.as_ref()).map(|m| MemoryStats {
        time: time_of_ns(sampled_at(m.timestamp, clock)),
        // Runtimes say 0 for a container without a memory limit: nothing to be near.
        available_bytes: value(m.available_bytes.as_ref()).filter(|bytes| *bytes > 0),
        usage_bytes: value(m.usage_bytes.as_ref()),
        working_set_bytes: value(m.working_set_bytes.as_ref()),
        rss_bytes: value(m.rss_bytes.as_ref()),
        page_faults: value(m.page_faults.as_ref()),
        major_page_faults: value(m.major_page_faults.as_ref()),
    });
    let rootfs = stats
        .and_then(|s| s.writable_layer.as_ref())
        .and_then(|layer| {
            let mount = layer.fs_id.as_ref()?.mountpoint.as_str();
            let used = (
                value(layer.used_bytes.as_ref()).unwrap_or(0),
                value(layer.inodes_used.as_ref()).unwrap_or(0),
            );
            Some(FsStats {
                time: time_of_ns(sampled_at(layer.timestamp, clock)),
                ..consumer(filesystems.get(mount)?, used)
            })
        });
    let logs = host.logs_fs.as_ref().map(|fs| {
        let used = host
            .container_logs
            .get(&plan.name)
            .copied()
            .unwrap_or((0, 0));
        consumer(fs, used)
    });
    ContainerStats {
        name: plan.name.clone(),
        start_time: time_of_ns(plan.created_at),
        cpu,
        memory,
        rootfs,
        logs,
    }
}

/// Sums `pick` over the containers that have it; `None` when none has.
fn sum<T>(items: &[T], pick: impl Fn(&T) -> Option<u64>) -> Option<u64> {
    items
        .iter()
        .filter_map(pick)
        .fold(None, |total, v| Some(total.unwrap_or(0).saturating_add(v)))
}

fn cpu_sum(containers: &[ContainerStats], clock: Clock) -> CpuStats {
    let cpu =
        |pick: fn(&CpuStats) -> Option<u64>| sum(containers, |c| c.cpu.as_ref().and_then(pick));
    CpuStats {
        time: clock.time(),
        usage_nano_cores: cpu(|c| c.usage_nano_cores),
        usage_core_nano_seconds: cpu(|c| c.usage_core_nano_seconds),
    }
}

fn memory_sum(containers: &[ContainerStats], clock: Clock) -> MemoryStats {
    let memory = |pick: fn(&MemoryStats) -> Option<u64>| {
        sum(containers, |c| c.memory.as_ref().and_then(pick))
    };
    MemoryStats {
        time: clock.time(),
        available_bytes: None,
        usage_bytes: memory(|m| m.usage_bytes),
        working_set_bytes: memory(|m| m.working_set_bytes),
        rss_bytes: memory(|m| m.rss_bytes),
        page_faults: memory(|m| m.page_faults),
        major_page_faults: memory(|m| m.major_page_faults),
    }
}

/// The pod's local disk use: its writable layers, its logs and its disk-backed volumes (and
/// hosts file), against the node's filesystem.
fn ephemeral(root_fs: &FsStats, containers: &[ContainerStats], host: &PodHost) -> FsStats {
    let layers = |pick: fn(&FsStats) -> Option<u64>| {
        sum(containers, |c| c.rootfs.as_ref().and_then(pick)).unwrap_or(0)
    };
    let (log_bytes, log_inodes) = host.pod_logs;
    let (volume_bytes, volume_inodes) = host.volumes.ephemeral;
    consumer(
        root_fs,
        (
            layers(|fs| fs.used_bytes)
                .saturating_add(log_bytes)
                .saturating_add(volume_bytes),
            layers(|fs| fs.inodes_used)
                .saturating_add(log_inodes)
                .saturating_add(volume_inodes),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use sergeant_core::stats::summary::PodReference;

    fn sample(id: &str, at: i64, usage: u64, working_set: u64) -> cri::ContainerStats {
        let v = |value| Some(cri::UInt64Value { value });
        cri::ContainerStats {
            attributes: Some(cri::ContainerAttributes {
                id: id.to_string(),
                ..Default::default()
            }),
            cpu: Some(cri::CpuUsage {
                timestamp: at,
                usage_core_nano_seconds: v(usage),
                usage_nano_cores: None,
            }),
            memory: Some(cri::MemoryUsage {
                timestamp: at,
                working_set_bytes: v(working_set),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn plan(at: i64, busy: u64, idle: u64) -> Vec<PodPlan> {
        let container = |id: &str, usage| ContainerPlan {
            id: id.to_string(),
            name: id.to_string(),
            created_at: 0,
            stats: Some(sample(id, at, usage, 1000)),
        };
        vec![PodPlan {
            pod_ref: PodReference::default(),
            start_time: time_of_ns(0),
            sandbox_id: "s".to_string(),
            containers: vec![container("busy", busy), container("idle", idle)],
            usage: None,
        }]
    }

    fn build(plans: Vec<PodPlan>, rates: &mut CpuRates) -> PodStats {
        let host = Host::default();
        let inputs = Inputs {
            host: &host,
            root_fs: None,
            rates,
            clock: Clock::read(),
        };
        pods(plans, inputs).remove(0)
    }

    #[test]
    fn container_rates_come_from_the_previous_sample_and_the_pod_sums_them() {
        let second = 1_000_000_000;
        let mut rates = CpuRates::default();
        let first = build(plan(10 * second, 0, 0), &mut rates);
        assert_eq!(
            first.containers[0].cpu.as_ref().unwrap().usage_nano_cores,
            None
        );
        assert_eq!(first.cpu.as_ref().unwrap().usage_nano_cores, None);
        assert_eq!(first.memory.as_ref().unwrap().working_set_bytes, Some(2000));
        let busy_used = 2_000_000_000; // one full core over two seconds
        let later = build(plan(12 * second, busy_used, 1_000_000), &mut rates);
        let rate = |i: usize| later.containers[i].cpu.as_ref().unwrap().usage_nano_cores;
        assert_eq!(rate(0), Some(1_000_000_000));
        assert_eq!(rate(1), Some(500_000));
        assert_eq!(
            later.cpu.as_ref().unwrap().usage_nano_cores,
            Some(1_000_500_000)
        );
        assert_eq!(
            later.cpu.unwrap().usage_core_nano_seconds,
            Some(busy_used + 1_000_000)
        );
    }

    #[test]
    fn the_runtimes_pod_numbers_replace_the_sums_when_it_gave_them() {
        use sergeant_core::stats::summary::{InterfaceStats, NetworkStats};
        use sergeant_core::stats::windows::pods::PodUsage;
        let at = Clock::read();
        let usage = PodUsage {
            cpu: Some(CpuStats {
                time: at.time(),
                usage_nano_cores: Some(7),
                usage_core_nano_seconds: Some(70),
            }),
            memory: None,
            network: Some(NetworkStats {
                time: at.time(),
                default: InterfaceStats::default(),
                interfaces: Vec::new(),
            }),
            containers: Vec::new(),
        };
        let mut plans = plan(10_000_000_000, 5, 6);
        plans[0].usage = Some(usage.clone());
        let pod = build(plans, &mut CpuRates::default());
        assert_eq!(pod.cpu, usage.cpu, "the runtime's");
        assert_eq!(pod.network, usage.network);
        let memory = pod.memory.expect("summed, as the runtime gave none");
        assert_eq!(memory.working_set_bytes, Some(2000));
    }
}
