//! The eviction signals as upstream defines them: what is available of a resource and its
//! capacity. `memory.available` is capacity less the root cgroup's working set (on Windows,
//! what can still be committed: [`commit_memory_available`]);
//! `allocatableMemory.available` is allocatable memory (the `kubepods` cgroup's limit) less
//! the pods' working set ([`allocatable_memory`]);
//! `nodefs.*` are the filesystem of the kubelet's root directory, `imagefs.*` the runtime's
//! image filesystem (`containerfs.*` the same filesystem as `nodefs` here: containerd keeps
//! writable layers with its images); `pid.available` is the process limit less the processes.

use std::collections::BTreeMap;
use std::fmt;

pub use sergeant_config::Signal;

use crate::stats::windows::system::CommitMemory;

/// One signal's reading: what is available and of how much. Bytes, inodes or processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observation {
    /// What is available now.
    pub available: u64,
    /// The total it is available of (percentage thresholds are taken of it).
    pub capacity: u64,
}

/// Every signal observed in one sample; a signal the node cannot observe is missing and its
/// thresholds are never met.
pub type Observations = BTreeMap<Signal, Observation>;

/// The node condition a signal's pressure is reported as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pressure {
    /// `MemoryPressure`.
    Memory,
    /// `DiskPressure`.
    Disk,
    /// `PIDPressure`.
    Pid,
}

impl Pressure {
    /// Every pressure condition, in the order the node reports them.
    pub const ALL: [Pressure; 3] = [Pressure::Memory, Pressure::Disk, Pressure::Pid];

    /// The node condition type.
    #[must_use]
    pub fn condition_type(self) -> &'static str {
        match self {
            Pressure::Memory => "MemoryPressure",
            Pressure::Disk => "DiskPressure",
            Pressure::Pid => "PIDPressure",
        }
    }

    /// The condition of `signal`.
    #[must_use]
    pub fn of(signal: Signal) -> Self {
        match signal {
            Signal::MemoryAvailable | Signal::AllocatableMemoryAvailable => Pressure::Memory,
            Signal::PidAvailable => Pressure::Pid,
            Signal::NodeFsAvailable
            | Signal::NodeFsInodesFree
            | Signal::ImageFsAvailable
            | Signal::ImageFsInodesFree
            | Signal::ContainerFsAvailable
            | Signal::ContainerFsInodesFree => Pressure::Disk,
        }
    }
}

impl fmt::Display for Pressure {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.condition_type())
    }
}

/// The resource a signal starves, which decides how pods are ranked and what the evicted
/// pod's message names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Resource {
    /// `memory`.
    Memory,
    /// `ephemeral-storage`.
    EphemeralStorage,
    /// `inodes`.
    Inodes,
    /// `pids`.
    Pids,
}

impl Resource {
    /// The resource `signal` starves.
    #[must_use]
    pub fn of(signal: Signal) -> Self {
        match signal {
            Signal::MemoryAvailable | Signal::AllocatableMemoryAvailable => Resource::Memory,
            Signal::NodeFsAvailable | Signal::ImageFsAvailable | Signal::ContainerFsAvailable => {
                Resource::EphemeralStorage
            }
            Signal::NodeFsInodesFree
            | Signal::ImageFsInodesFree
            | Signal::ContainerFsInodesFree => Resource::Inodes,
            Signal::PidAvailable => Resource::Pids,
        }
    }

    /// Its name, as upstream's messages say it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Resource::Memory => "memory",
            Resource::EphemeralStorage => "ephemeral-storage",
            Resource::Inodes => "inodes",
            Resource::Pids => "pids",
        }
    }
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `allocatableMemory.available` as upstream observes it from the Summary API's `pods`
/// container: the `kubepods` cgroup's memory limit (the node's allocatable memory) less the
/// cgroup's working set, of that limit. Not observed while the cgroup has no limit
/// (`limit_bytes` `None`), as cAdvisor then reports nothing available.
#[must_use]
pub fn allocatable_memory(limit_bytes: Option<u64>, working_set_bytes: u64) -> Option<Observation> {
    let capacity = limit_bytes?;
    Some(Observation {
        available: capacity.saturating_sub(working_set_bytes),
        capacity,
    })
}

/// `memory.available` on Windows, as upstream observes it from the summary's
/// `windows-global-commit-memory` system container: what can still be committed, of the
/// commit charge and that together (the commit limit).
#[must_use]
pub fn commit_memory_available(commit: CommitMemory) -> Observation {
    let available = commit.available_bytes();
    Observation {
        available,
        capacity: available.saturating_add(commit.total_bytes),
    }
}

/// Whether node-level reclaim (dead containers, then unused images) can relieve `signal`,
/// as upstream tries it before evicting for a disk signal. With a dedicated image
/// filesystem (`dedicated_image_fs`: the runtime's images are on another filesystem than
/// the root directory) deleting images frees nothing on nodefs, so upstream reclaims nothing
/// on the node for the `nodefs.*` signals and goes straight to evicting pods. When it is not
/// known (`None`), the filesystems are taken as shared and node-level reclaim is tried.
#[must_use]
pub fn reclaimable_on_node(signal: Signal, dedicated_image_fs: Option<bool>) -> bool {
    match signal {
        Signal::NodeFsAvailable | Signal::NodeFsInodesFree => dedicated_image_fs != Some(true),
        _ => Pressure::of(signal) == Pressure::Disk,
    }
}
