//! The node's system containers in the summary: `pods`, the cgroup all pods run under
//! (`kubepods`), as the upstream kubelet lists it (cAdvisor's numbers for that cgroup), from the
//! stats provider's sample of it. Its CPU rate is taken against the previous sample kept under
//! [`PODS`].

use std::time::UNIX_EPOCH;

use sergeant_actors::stats::PodsCgroup;
use sergeant_core::stats::summary::{ContainerStats, CpuStats, MemoryStats};
use sergeant_host::stats::time_of_ns;

use super::rate::CpuRates;

/// The name upstream gives the pods' system container, and the key of its CPU samples.
pub const PODS: &str = "pods";

/// The `pods` system container of `cgroup`; `None` when neither its memory nor its CPU time
/// could be read.
pub fn pods(cgroup: &PodsCgroup, rates: &mut CpuRates) -> Option<ContainerStats> {
    if cgroup.memory.is_none() && cgroup.cpu.is_none() {
        return None;
    }
    let time = cgroup.clock.time();
    let since_ns = cgroup
        .cpu
        .and_then(|cpu| cpu.since)
        .and_then(|since| since.duration_since(UNIX_EPOCH).ok())
        .and_then(|since| i64::try_from(since.as_nanos()).ok())
        .unwrap_or(cgroup.clock.ns());
    Some(ContainerStats {
        name: PODS.to_owned(),
        start_time: time_of_ns(since_ns),
        cpu: cgroup.cpu.map(|cpu| CpuStats {
            time: time.clone(),
            usage_nano_cores: rates.rate(PODS, cgroup.clock.ns(), cpu.usage_ns),
            usage_core_nano_seconds: Some(cpu.usage_ns),
        }),
        memory: cgroup.memory.map(|memory| MemoryStats {
            time,
            available_bytes: memory
                .limit_bytes
                .map(|limit| limit.saturating_sub(memory.working_set_bytes)),
            usage_bytes: Some(memory.usage_bytes),
            working_set_bytes: Some(memory.working_set_bytes),
            rss_bytes: None,
            page_faults: None,
            major_page_faults: None,
        }),
        rootfs: None,
        logs: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sergeant_host::cgroup::{CgroupCpu, CgroupMemory};
    use sergeant_host::stats::Clock;

    fn cgroup(usage_ns: u64) -> PodsCgroup {
        PodsCgroup {
            clock: Clock::read(),
            memory: Some(CgroupMemory {
                limit_bytes: Some(1000),
                usage_bytes: 700,
                working_set_bytes: 600,
            }),
            cpu: Some(CgroupCpu {
                usage_ns,
                since: Some(UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000)),
            }),
        }
    }

    #[test]
    fn the_pods_container_shows_the_cgroups_memory_and_cpu_time() {
        let mut rates = CpuRates::default();
        let pods = pods(&cgroup(5_000), &mut rates).expect("an entry");
        assert_eq!(pods.name, "pods");
        assert_eq!(pods.start_time, time_of_ns(1_700_000_000_000_000_000));
        let memory = pods.memory.expect("memory");
        assert_eq!(
            (
                memory.available_bytes,
                memory.usage_bytes,
                memory.working_set_bytes
            ),
            (Some(400), Some(700), Some(600))
        );
        let cpu = pods.cpu.expect("cpu");
        assert_eq!(cpu.usage_core_nano_seconds, Some(5_000));
        assert_eq!(cpu.usage_nano_cores, None, "no rate from one sample");
    }

    #[test]
    fn an_unlimited_cgroup_has_no_available_memory_and_an_unread_one_no_entry() {
        let mut rates = CpuRates::default();
        let mut unlimited = cgroup(1);
        unlimited.memory = unlimited.memory.map(|m| CgroupMemory {
            limit_bytes: None,
            ..m
        });
        let memory = pods(&unlimited, &mut rates)
            .and_then(|p| p.memory)
            .expect("memory");
        assert_eq!(memory.available_bytes, None);
        let unread = PodsCgroup {
            memory: None,
            cpu: None,
            ..cgroup(1)
        };
        assert_eq!(pods(&unread, &mut rates), None);
    }
}
