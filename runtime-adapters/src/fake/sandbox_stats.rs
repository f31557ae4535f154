//! `ListPodSandboxStats` of the fake runtime: for each sandbox passing the filter, its
//! containers' usage and their sums, in the sandbox's shape — the Windows half for a Windows
//! pod ([`super::windows_stats`]), the Linux half for the others. Made-up numbers, as every
//! usage the fake reports ([`super::stats`]).
//!
//! Entry point: [`FakeRuntime::list_pod_sandbox_stats`].

use sergeant_messages::runtime::cri;

use super::stats::{sample, value};
use super::windows_stats;
use super::FakeRuntime;

impl FakeRuntime {
    /// `ListPodSandboxStats`: the stats of every sandbox passing the filter.
    pub(super) fn list_pod_sandbox_stats(
        &mut self,
        request: &cri::ListPodSandboxStatsRequest,
    ) -> cri::ListPodSandboxStatsResponse {
        let now = self.clock.now_ns();
        let filter = request.filter.clone().unwrap_or_default();
        let wanted = cri::PodSandboxFilter {
            id: filter.id,
            state: None,
            label_selector: filter.label_selector,
        };
        let stats = self
            .sandboxes
            .iter()
            .filter(|(id, sandbox)| sandbox.passes(id, &wanted))
            .map(|(id, sandbox)| {
                let containers = self
                    .containers
                    .iter()
                    .filter(|(_, container)| &container.sandbox_id == id);
                let (linux, windows) = if sandbox.windows {
                    let containers = containers
                        .map(|(cid, c)| windows_stats::container(cid, c, now))
                        .collect();
                    (None, Some(windows_stats::pod(containers, now)))
                } else {
                    let containers = containers.map(|(cid, c)| sample(cid, c, now)).collect();
                    (Some(linux_pod(containers, now)), None)
                };
                cri::PodSandboxStats {
                    attributes: Some(sandbox.attributes(id)),
                    linux,
                    windows,
                }
            })
            .collect();
        cri::ListPodSandboxStatsResponse { stats }
    }
}

/// The Linux half of a pod's stats at `now`: the CPU and memory sums of its `containers`.
fn linux_pod(containers: Vec<cri::ContainerStats>, now: i64) -> cri::LinuxPodSandboxStats {
    let sum = |pick: fn(&cri::ContainerStats) -> Option<u64>| {
        value(
            containers
                .iter()
                .filter_map(pick)
                .fold(0, u64::saturating_add),
        )
    };
    cri::LinuxPodSandboxStats {
        cpu: Some(cri::CpuUsage {
            timestamp: now,
            usage_core_nano_seconds: sum(|c| Some(c.cpu?.usage_core_nano_seconds?.value)),
            usage_nano_cores: None,
        }),
        memory: Some(cri::MemoryUsage {
            timestamp: now,
            working_set_bytes: sum(|c| Some(c.memory?.working_set_bytes?.value)),
            usage_bytes: sum(|c| Some(c.memory?.usage_bytes?.value)),
            ..Default::default()
        }),
        containers,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use sergeant_messages::runtime::{RuntimeRequest, RuntimeResponse};

    use super::*;
    use crate::fake::container::Phase;
    use crate::fake::stats::tests::in_sandbox;
    use crate::fake::stats::{NANO_CORES, WORKING_SET_BYTES};
    use crate::fake::windows_stats::{COMMIT_BYTES, INTERFACE};

    /// Runs a sandbox named `name`, a Windows pod when `windows`, with one running container
    /// (`<name>-run`) and one created (`<name>-new`); answers its id.
    fn pod(runtime: &mut FakeRuntime, name: &str, windows: bool) -> String {
        let config = cri::PodSandboxConfig {
            metadata: Some(cri::PodSandboxMetadata {
                name: name.into(),
                namespace: "ns".into(),
                uid: format!("uid-{name}"),
                attempt: 0,
            }),
            windows: windows.then(cri::WindowsPodSandboxConfig::default),
            ..Default::default()
        };
        let request = RuntimeRequest::RunPodSandbox(cri::RunPodSandboxRequest {
            config: Some(config),
            ..Default::default()
        });
        let Ok(RuntimeResponse::RunPodSandbox(ran)) = runtime.call(request) else {
            panic!("no sandbox");
        };
        let id = ran.pod_sandbox_id;
        let started_at = runtime.clock.now_ns();
        let running = in_sandbox(&id, Phase::Running { started_at });
        runtime.containers.insert(format!("{name}-run"), running);
        let created = in_sandbox(&id, Phase::Created);
        runtime.containers.insert(format!("{name}-new"), created);
        id
    }

    fn list(runtime: &mut FakeRuntime, id: &str) -> Vec<cri::PodSandboxStats> {
        let request = cri::ListPodSandboxStatsRequest {
            filter: Some(cri::PodSandboxStatsFilter {
                id: id.to_owned(),
                ..Default::default()
            }),
        };
        let Ok(RuntimeResponse::ListPodSandboxStats(list)) =
            runtime.call(RuntimeRequest::ListPodSandboxStats(request))
        else {
            panic!("not a sandbox stats list");
        };
        list.stats
    }

    /// The CPU rate, working set and commit charge of Windows stats.
    fn numbers(
        cpu: Option<cri::WindowsCpuUsage>,
        memory: Option<cri::WindowsMemoryUsage>,
    ) -> [Option<u64>; 3] {
        let memory = memory.unwrap_or_default();
        [
            cpu.and_then(|c| c.usage_nano_cores),
            memory.working_set_bytes,
            memory.commit_memory_bytes,
        ]
        .map(|v| v.map(|v| v.value))
    }

    #[test]
    fn a_windows_pod_has_windows_stats_summed_from_its_containers() {
        let mut runtime = FakeRuntime::new();
        let id = pod(&mut runtime, "win", true);
        pod(&mut runtime, "other", true);
        let stats = list(&mut runtime, &id);
        assert_eq!(stats.len(), 1, "the filter picks the sandbox");
        let attributes = stats[0].attributes.as_ref().expect("attributes");
        assert_eq!(attributes.id, id);
        assert!(stats[0].linux.is_none());
        let windows = stats[0].windows.as_ref().expect("the Windows half");
        let by_id = |cid: &str| {
            let found = windows.containers.iter();
            let mut found = found.filter(|c| c.attributes.as_ref().is_some_and(|a| a.id == cid));
            found.next().expect("container")
        };
        let uses = [
            Some(NANO_CORES),
            Some(WORKING_SET_BYTES),
            Some(COMMIT_BYTES),
        ];
        let running = by_id("win-run");
        assert_eq!(numbers(running.cpu, running.memory), uses);
        let idle = by_id("win-new");
        assert_eq!(numbers(idle.cpu, idle.memory), [Some(0); 3]);
        assert_eq!(
            numbers(windows.cpu, windows.memory),
            uses,
            "the pod: the sums"
        );
        let pod_time = windows.cpu.and_then(|c| c.usage_core_nano_seconds);
        assert_eq!(
            pod_time,
            running.cpu.and_then(|c| c.usage_core_nano_seconds)
        );
        let network = windows.network.as_ref().expect("network");
        let interface = network.default_interface.as_ref().map(|i| i.name.as_str());
        assert_eq!(interface, Some(INTERFACE));
        let processes = windows.process.and_then(|p| p.process_count);
        assert_eq!(processes.map(|v| v.value), Some(1));
    }

    #[test]
    fn a_linux_pod_has_linux_stats_and_its_containers_linux_samples() {
        let mut runtime = FakeRuntime::new();
        let id = pod(&mut runtime, "lin", false);
        let stats = list(&mut runtime, &id);
        assert!(stats[0].windows.is_none());
        let linux = stats[0].linux.as_ref().expect("the Linux half");
        assert_eq!(linux.containers.len(), 2);
        let memory = linux.memory.expect("memory");
        assert_eq!(
            memory.working_set_bytes.map(|v| v.value),
            Some(WORKING_SET_BYTES)
        );
    }

    #[test]
    fn list_container_stats_answers_a_windows_pods_containers_in_windows_shape() {
        let mut runtime = FakeRuntime::new();
        pod(&mut runtime, "win", true);
        pod(&mut runtime, "lin", false);
        let all = runtime.list_container_stats(&cri::ListContainerStatsRequest::default());
        let memory = |cid: &str| {
            all.stats
                .iter()
                .find(|s| s.attributes.as_ref().is_some_and(|a| a.id == cid))
                .and_then(|s| s.memory)
                .expect("memory")
        };
        let windows = memory("win-run");
        assert_eq!(windows.usage_bytes.map(|v| v.value), Some(COMMIT_BYTES));
        assert_eq!(windows.rss_bytes, None);
        let linux = memory("lin-run");
        assert_eq!(linux.usage_bytes.map(|v| v.value), Some(WORKING_SET_BYTES));
        assert!(linux.rss_bytes.is_some());
    }
}
