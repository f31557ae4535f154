//! The node's system containers in the summary ([`containers`]). On Linux: `pods`, the cgroup
//! all pods run under (`kubepods`), as the upstream kubelet lists it (cAdvisor's numbers for
//! that cgroup), from the stats provider's sample of it; its CPU rate is taken against the
//! previous sample kept under [`PODS`]. On Windows, where the node sample has the machine's
//! commit charge, upstream's two: `pods` summed from the pods, and
//! `windows-global-commit-memory` (`sergeant_core::stats::windows::system`).

use std::time::UNIX_EPOCH;

use sergeant_actors::stats::PodsCgroup;
use sergeant_core::stats::summary::{ContainerStats, CpuStats, MemoryStats, PodStats};
use sergeant_core::stats::windows::system::{self as windows, CommitMemory};
use sergeant_host::stats::{time_of_ns, Clock};

use super::rate::CpuRates;

pub use sergeant_core::stats::windows::system::PODS;

/// The system containers: Windows' two when there is a `commit` charge (with `pods` summed
/// from `pods` at `clock`), else the `pods` cgroup's entry when it was read.
pub fn containers(
    commit: Option<CommitMemory>,
    cgroup: Option<&PodsCgroup>,
    pods: &[PodStats],
    clock: Clock,
    rates: &mut CpuRates,
) -> Option<Vec<ContainerStats>> {
    match commit {
        Some(commit) => Some(vec![
            windows::pods(pods, clock.time()),
            windows::commit_memory(commit, clock.time()),
        ]),
        None => cgroup
            .and_then(|cgroup| self::pods(cgroup, rates))
            .map(|pods| vec![pods]),
    }
}

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
    fn a_commit_charge_gives_windows_system_containers_and_no_cgroup_read() {
        let mut rates = CpuRates::default();
        let commit = CommitMemory {
            limit_bytes: 100,
            total_bytes: 40,
        };
        let listed = containers(
            Some(commit),
            Some(&cgroup(5)),
            &[],
            Clock::read(),
            &mut rates,
        )
        .expect("system containers");
        let names: Vec<&str> = listed.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, [PODS, windows::GLOBAL_COMMIT_MEMORY]);
        assert_eq!(
            listed[0].memory.as_ref().and_then(|m| m.working_set_bytes),
            None
        );
        let linux = containers(None, Some(&cgroup(5)), &[], Clock::read(), &mut rates)
            .expect("the cgroup's");
        assert_eq!(
            linux[0].memory.as_ref().and_then(|m| m.working_set_bytes),
            Some(600)
        );
        assert_eq!(containers(None, None, &[], Clock::read(), &mut rates), None);
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
