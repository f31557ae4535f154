//! Resource usage of the fake runtime (`ListContainerStats`, `ImageFsInfo`): made-up but
//! plausible numbers, so a hollow node's `/stats/summary` looks like a lightly loaded real one.
//! A running hollow container uses one millicore and a few MiB; stopped ones use nothing. A
//! container of a Windows pod answers Windows-shaped numbers ([`super::windows_stats`]).

use sergeant_messages::runtime::cri;

use super::container::{Container, Phase};
use super::windows_stats;
use super::FakeRuntime;

/// CPU a running hollow container is said to use, in nanocores (one millicore).
pub(super) const NANO_CORES: u64 = 1_000_000;
/// Memory a running hollow container is said to use.
pub(super) const WORKING_SET_BYTES: u64 = 4 * 1024 * 1024;
/// Where the fake says it keeps images and writable layers.
const FAKE_FS_MOUNTPOINT: &str = "/var/lib/sergeant-fake";

/// A protobuf `UInt64Value`.
pub(super) fn value(value: u64) -> Option<cri::UInt64Value> {
    Some(cri::UInt64Value { value })
}

/// An empty filesystem usage sample at `now`.
fn fs_usage(now: i64) -> cri::FilesystemUsage {
    cri::FilesystemUsage {
        timestamp: now,
        fs_id: Some(cri::FilesystemIdentifier {
            mountpoint: FAKE_FS_MOUNTPOINT.to_string(),
        }),
        used_bytes: value(0),
        inodes_used: value(0),
    }
}

/// What a container has used by `now`: `(CPU core-nanoseconds, working set bytes)`, one
/// millicore since it started and [`WORKING_SET_BYTES`] while it runs.
pub(super) fn used(container: &Container, now: i64) -> (u64, u64) {
    match container.phase {
        Phase::Running { started_at } => {
            let ran_ns = u128::try_from(now.saturating_sub(started_at)).unwrap_or(0);
            let used = ran_ns * u128::from(NANO_CORES) / 1_000_000_000;
            (u64::try_from(used).unwrap_or(u64::MAX), WORKING_SET_BYTES)
        }
        Phase::Created | Phase::Exited { .. } => (0, 0),
    }
}

/// The attributes a container's stats carry.
pub(super) fn attributes(id: &str, container: &Container) -> cri::ContainerAttributes {
    cri::ContainerAttributes {
        id: id.to_string(),
        metadata: Some(container.metadata.clone()),
        labels: container.labels.clone(),
        annotations: container.annotations.clone(),
    }
}

/// The usage sample of one container of a Linux pod at `now`.
pub(super) fn sample(id: &str, container: &Container, now: i64) -> cri::ContainerStats {
    let (core_nanos, working_set) = used(container, now);
    cri::ContainerStats {
        attributes: Some(attributes(id, container)),
        cpu: Some(cri::CpuUsage {
            timestamp: now,
            usage_core_nano_seconds: value(core_nanos),
            usage_nano_cores: None,
        }),
        memory: Some(cri::MemoryUsage {
            timestamp: now,
            working_set_bytes: value(working_set),
            available_bytes: value(0),
            usage_bytes: value(working_set),
            rss_bytes: value(working_set),
            page_faults: value(0),
            major_page_faults: value(0),
        }),
        writable_layer: Some(fs_usage(now)),
        swap: None,
    }
}

impl FakeRuntime {
    /// `ListContainerStats`: a sample for every container passing the filter.
    pub(super) fn list_container_stats(
        &mut self,
        request: &cri::ListContainerStatsRequest,
    ) -> cri::ListContainerStatsResponse {
        let now = self.clock.now_ns();
        let filter = request.filter.clone().unwrap_or_default();
        let wanted = cri::ContainerFilter {
            id: filter.id,
            pod_sandbox_id: filter.pod_sandbox_id,
            label_selector: filter.label_selector,
            state: None,
        };
        let stats = self
            .containers
            .iter()
            .filter(|(id, container)| container.passes(id, &wanted))
            .map(|(id, container)| {
                if self.in_windows_pod(container) {
                    windows_stats::list_entry(id, container, now)
                } else {
                    sample(id, container, now)
                }
            })
            .collect();
        cri::ListContainerStatsResponse { stats }
    }

    /// Whether `container` belongs to a Windows pod's sandbox.
    pub(super) fn in_windows_pod(&self, container: &Container) -> bool {
        self.sandboxes
            .get(&container.sandbox_id)
            .is_some_and(|sandbox| sandbox.windows)
    }

    /// `ImageFsInfo`: one image filesystem holding nothing (hollow images take no space).
    pub(super) fn image_fs_info(&mut self) -> cri::ImageFsInfoResponse {
        let now = self.clock.now_ns();
        cri::ImageFsInfoResponse {
            image_filesystems: vec![fs_usage(now)],
            container_filesystems: Vec::new(),
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::collections::HashMap;

    use sergeant_messages::runtime::{RuntimeRequest, RuntimeResponse};

    use super::*;

    /// A container of sandbox `sandbox_id` in `phase`.
    pub(in super::super) fn in_sandbox(sandbox_id: &str, phase: Phase) -> Container {
        Container {
            sandbox_id: sandbox_id.to_string(),
            metadata: cri::ContainerMetadata {
                name: "app".to_string(),
                attempt: 0,
            },
            image: "docker.io/library/busybox:latest".to_string(),
            created_at: 0,
            phase,
            log_path: String::new(),
            labels: HashMap::new(),
            annotations: HashMap::new(),
            resources: None,
        }
    }

    fn container(phase: Phase) -> Container {
        in_sandbox("sandbox", phase)
    }

    #[test]
    fn a_running_container_uses_a_millicore_and_a_stopped_one_nothing() {
        let started_at = 1_000_000_000_000;
        let ten_seconds_later = started_at + 10_000_000_000;
        let running = sample(
            "a",
            &container(Phase::Running { started_at }),
            ten_seconds_later,
        );
        let cpu = running.cpu.unwrap().usage_core_nano_seconds.unwrap().value;
        assert_eq!(cpu, 10 * NANO_CORES);
        let memory = running.memory.unwrap().working_set_bytes.unwrap().value;
        assert_eq!(memory, WORKING_SET_BYTES);
        let created = sample("b", &container(Phase::Created), ten_seconds_later);
        assert_eq!(
            created.cpu.unwrap().usage_core_nano_seconds.unwrap().value,
            0
        );
        assert_eq!(created.attributes.unwrap().id, "b");
    }

    #[test]
    fn the_filter_picks_containers_by_sandbox() {
        let mut runtime = FakeRuntime::new();
        runtime
            .containers
            .insert("a".to_string(), container(Phase::Created));
        let list = |sandbox: &str, runtime: &mut FakeRuntime| {
            runtime.list_container_stats(&cri::ListContainerStatsRequest {
                filter: Some(cri::ContainerStatsFilter {
                    pod_sandbox_id: sandbox.to_string(),
                    ..Default::default()
                }),
            })
        };
        assert_eq!(list("sandbox", &mut runtime).stats.len(), 1);
        assert!(list("other", &mut runtime).stats.is_empty());
    }

    #[test]
    fn an_empty_runtime_has_no_container_stats_and_one_image_filesystem() {
        let mut runtime = FakeRuntime::new();
        let Ok(RuntimeResponse::ListContainerStats(list)) = runtime.call(
            RuntimeRequest::ListContainerStats(cri::ListContainerStatsRequest::default()),
        ) else {
            panic!("not a stats list");
        };
        assert!(list.stats.is_empty());
        let Ok(RuntimeResponse::ImageFsInfo(fs)) =
            runtime.call(RuntimeRequest::ImageFsInfo(cri::ImageFsInfoRequest {}))
        else {
            panic!("not image fs info");
        };
        assert_eq!(fs.image_filesystems.len(), 1);
    }
}
