//! The eviction signals of one stats sample, and each pod's use of the starved resource, as
//! upstream computes them from the Summary API's numbers.

use std::collections::HashMap;
use std::sync::Arc;

use sergeant_core::eviction::rank::{PodUsage, Usage};
use sergeant_core::eviction::signals::{Observation, Observations, Signal};
use sergeant_core::labels;
use sergeant_core::stats::summary::FsStats;
use sergeant_messages::pods::core::Pod;
use sergeant_messages::runtime::cri;

use crate::stats::Sample;

/// The signals `sample` shows. `containerfs.*` is the image filesystem (containerd keeps
/// writable layers with the images); a signal whose numbers are missing is left out.
#[must_use]
pub fn signals(sample: &Sample) -> Observations {
    let mut observed = Observations::new();
    let memory = &sample.node.memory;
    if let (Some(available), Some(working_set)) = (memory.available_bytes, memory.working_set_bytes)
    {
        observed.insert(
            Signal::MemoryAvailable,
            Observation {
                available,
                capacity: available.saturating_add(working_set),
            },
        );
    }
    filesystem(
        &mut observed,
        &sample.node.fs,
        Signal::NodeFsAvailable,
        Signal::NodeFsInodesFree,
    );
    if let Some(image_fs) = image_fs(sample) {
        filesystem(
            &mut observed,
            image_fs,
            Signal::ImageFsAvailable,
            Signal::ImageFsInodesFree,
        );
        filesystem(
            &mut observed,
            image_fs,
            Signal::ContainerFsAvailable,
            Signal::ContainerFsInodesFree,
        );
    }
    let rlimit = &sample.node.rlimit;
    if let (Some(max), Some(current)) = (rlimit.maxpid, rlimit.curproc) {
        let capacity = u64::try_from(max).unwrap_or(0);
        observed.insert(
            Signal::PidAvailable,
            Observation {
                available: capacity.saturating_sub(u64::try_from(current).unwrap_or(0)),
                capacity,
            },
        );
    }
    observed
}

/// The bytes and inodes signals of one filesystem.
fn filesystem(observed: &mut Observations, fs: &FsStats, bytes: Signal, inodes: Signal) {
    if let (Some(available), Some(capacity)) = (fs.available_bytes, fs.capacity_bytes) {
        observed.insert(
            bytes,
            Observation {
                available,
                capacity,
            },
        );
    }
    if let (Some(available), Some(capacity)) = (fs.inodes_free, fs.inodes) {
        observed.insert(
            inodes,
            Observation {
                available,
                capacity,
            },
        );
    }
}

/// The filesystem of the runtime's image filesystem, when it could be examined.
fn image_fs(sample: &Sample) -> Option<&FsStats> {
    let mountpoint = &sample.view.image_fs.first()?.fs_id.as_ref()?.mountpoint;
    sample.host.filesystems.get(mountpoint)
}

/// What one container uses, from the runtime's stats: `(name, working set, writable layer
/// bytes, writable layer inodes)`.
struct ContainerUse {
    name: String,
    working_set: Option<u64>,
    layer: (u64, u64),
}

/// The containers of pod `uid` in `sample`, with their use.
fn containers(sample: &Sample, uid: &str) -> Vec<ContainerUse> {
    sample
        .view
        .stats
        .iter()
        .filter_map(|stats| {
            let attributes = stats.attributes.as_ref()?;
            (attributes.labels.get(labels::POD_UID).map(String::as_str) == Some(uid))
                .then_some(())?;
            Some(ContainerUse {
                name: attributes.metadata.as_ref()?.name.clone(),
                working_set: stats
                    .memory
                    .as_ref()
                    .and_then(|m| m.working_set_bytes.as_ref())
                    .map(|v| v.value),
                layer: layer(stats.writable_layer.as_ref()),
            })
        })
        .collect()
}

fn layer(usage: Option<&cri::FilesystemUsage>) -> (u64, u64) {
    usage.map_or((0, 0), |u| {
        (
            u.used_bytes.as_ref().map_or(0, |v| v.value),
            u.inodes_used.as_ref().map_or(0, |v| v.value),
        )
    })
}

/// A container's request of `resource` in bytes, zero when unset.
fn request(container: &sergeant_messages::pods::core::Container, resource: &str) -> u64 {
    container
        .resources
        .as_ref()
        .and_then(|r| r.requests.as_ref())
        .and_then(|r| r.get(resource))
        .and_then(|q| q.0.parse::<sergeant_config::Quantity>().ok())
        .and_then(|q| u64::try_from(q.value()).ok())
        .unwrap_or(0)
}

/// The requests of every app container of `pod` by name: `(memory, ephemeral storage)`.
pub fn requests(pod: &Pod) -> HashMap<String, (u64, u64)> {
    pod.spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .map(|c| {
            (
                c.name.clone(),
                (request(c, "memory"), request(c, "ephemeral-storage")),
            )
        })
        .collect()
}

/// Each container's memory use and request in `pod`, for the evicted pod's message.
#[must_use]
pub fn memory_by_container(sample: &Sample, pod: &Pod) -> Vec<(String, u64, u64)> {
    let uid = pod.metadata.uid.as_deref().unwrap_or_default();
    let requests = requests(pod);
    containers(sample, uid)
        .into_iter()
        .filter_map(|c| {
            let request = requests.get(&c.name).map_or(0, |r| r.0);
            Some((c.name, c.working_set?, request))
        })
        .collect()
}

/// How `pod` uses the node in `sample`, with `processes` counted in its cgroup.
#[must_use]
pub fn pod_usage(sample: &Sample, pod: &Arc<Pod>, processes: Option<u64>) -> PodUsage {
    let uid = pod.metadata.uid.clone().unwrap_or_default();
    let requests = requests(pod);
    let (memory_request, storage_request) =
        requests.values().fold((0u64, 0u64), |(m, s), (pm, ps)| {
            (m.saturating_add(*pm), s.saturating_add(*ps))
        });
    let containers = containers(sample, &uid);
    let memory = (!containers.is_empty()).then(|| {
        containers
            .iter()
            .filter_map(|c| c.working_set)
            .fold(0u64, u64::saturating_add)
    });
    let sandbox = sample
        .view
        .sandboxes
        .iter()
        .find(|s| s.metadata.as_ref().is_some_and(|m| m.uid == uid));
    let host = sandbox.and_then(|s| sample.host.pods.get(&s.id));
    let storage = host.map(|host| {
        let layers = containers.iter().fold((0u64, 0u64), |(b, i), c| {
            (b.saturating_add(c.layer.0), i.saturating_add(c.layer.1))
        });
        (
            layers
                .0
                .saturating_add(host.pod_logs.0)
                .saturating_add(host.volumes.ephemeral.0),
            layers
                .1
                .saturating_add(host.pod_logs.1)
                .saturating_add(host.volumes.ephemeral.1),
        )
    });
    PodUsage {
        uid,
        priority: pod.spec.as_ref().and_then(|s| s.priority).unwrap_or(0),
        memory: memory.map(|used| Usage {
            used,
            requested: memory_request,
        }),
        storage: storage.map(|(used, _)| Usage {
            used,
            requested: storage_request,
        }),
        inodes: storage.map(|(_, inodes)| inodes),
        processes,
    }
}
