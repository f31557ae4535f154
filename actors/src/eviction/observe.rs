//! The eviction signals of one stats sample, and each pod's use of the starved resource, as
//! upstream computes them from the Summary API's numbers.

use std::collections::HashMap;
use std::sync::Arc;

use sergeant_core::eviction::message::ContainerUsage;
use sergeant_core::eviction::rank::{PodUsage, StorageParts, Usage};
use sergeant_core::eviction::signals::{
    allocatable_memory, commit_memory_available, Observation, Observations, Resource, Signal,
};
use sergeant_core::labels;
use sergeant_core::stats::summary::FsStats;
use sergeant_host::stats::pods::PodHost;
use sergeant_messages::pods::core::Pod;
use sergeant_messages::runtime::cri;

use crate::stats::Sample;

/// The signals `sample` shows. `memory.available` is what can still be committed when the
/// sample has the machine's commit charge (Windows, as upstream), else the node's memory;
/// `allocatableMemory.available` is the pods' cgroup's; `containerfs.*` is the image
/// filesystem (containerd keeps writable layers with the images); a signal whose numbers are
/// missing is left out.
#[must_use]
pub fn signals(sample: &Sample) -> Observations {
    let mut observed = Observations::new();
    let memory = &sample.node.memory;
    if let Some(commit) = sample.node.commit {
        observed.insert(Signal::MemoryAvailable, commit_memory_available(commit));
    } else if let (Some(available), Some(working_set)) =
        (memory.available_bytes, memory.working_set_bytes)
    {
        observed.insert(
            Signal::MemoryAvailable,
            Observation {
                available,
                capacity: available.saturating_add(working_set),
            },
        );
    }
    if let Some(pods) = sample
        .pods
        .and_then(|pods| pods.memory)
        .and_then(|m| allocatable_memory(m.limit_bytes, m.working_set_bytes))
    {
        observed.insert(Signal::AllocatableMemoryAvailable, pods);
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

/// The mount point of the runtime's image filesystem, when the runtime names one.
pub fn image_fs_mountpoint(sample: &Sample) -> Option<&String> {
    Some(&sample.view.image_fs.first()?.fs_id.as_ref()?.mountpoint)
}

/// The filesystem of the runtime's image filesystem, when it could be examined.
fn image_fs(sample: &Sample) -> Option<&FsStats> {
    sample.host.filesystems.get(image_fs_mountpoint(sample)?)
}

/// Whether the runtime's image filesystem is another filesystem than the root directory's
/// (upstream's dedicated imagefs); `None` when either device is unknown.
#[must_use]
pub fn dedicated_image_fs(sample: &Sample) -> Option<bool> {
    let images = sample.host.devices.get(image_fs_mountpoint(sample)?)?;
    Some(*images != sample.node.fs_device?)
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

/// The host-side numbers of pod `uid`'s sandbox in `sample`, when it has one.
fn pod_host<'a>(sample: &'a Sample, uid: &str) -> Option<&'a PodHost> {
    let sandbox = sample
        .view
        .sandboxes
        .iter()
        .find(|s| s.metadata.as_ref().is_some_and(|m| m.uid == uid))?;
    sample.host.pods.get(&sandbox.id)
}

/// Each app container's use of `resource` in `pod` with its request, for the evicted pod's
/// message as upstream words it: the working set for memory, the writable layer and logs for
/// ephemeral storage, nothing for the other resources. A container whose use was not
/// measured is left out.
#[must_use]
pub fn by_container(sample: &Sample, pod: &Pod, resource: Resource) -> Vec<ContainerUsage> {
    let uid = pod.metadata.uid.as_deref().unwrap_or_default();
    let requests = requests(pod);
    let host = pod_host(sample, uid);
    containers(sample, uid)
        .into_iter()
        .filter_map(|c| {
            let (memory, storage) = *requests.get(&c.name)?;
            let (used, requested) = match resource {
                Resource::Memory => (c.working_set?, memory),
                Resource::EphemeralStorage => {
                    let logs = host?.container_logs.get(&c.name)?;
                    (c.layer.0.saturating_add(logs.0), storage)
                }
                Resource::Inodes | Resource::Pids => return None,
            };
            Some(ContainerUsage {
                name: c.name,
                used,
                requested,
            })
        })
        .collect()
}

/// How `pod` uses the node in `sample`, with `processes` counted in its cgroup and, of its
/// local storage, the `parts` the starved filesystem holds.
#[must_use]
pub fn pod_usage(
    sample: &Sample,
    pod: &Arc<Pod>,
    processes: Option<u64>,
    parts: StorageParts,
) -> PodUsage {
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
    let storage = pod_host(sample, &uid).map(|host| {
        let mut used = (0u64, 0u64);
        let mut add = |(bytes, inodes): (u64, u64)| {
            used = (used.0.saturating_add(bytes), used.1.saturating_add(inodes));
        };
        if parts.layers {
            containers.iter().for_each(|c| add(c.layer));
        }
        if parts.logs_and_volumes {
            add(host.pod_logs);
            add(host.volumes.ephemeral);
        }
        used
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
