//! Which pod is evicted first, as upstream ranks them. For memory and ephemeral storage:
//! pods using more than they requested first, then lower priority first, then the larger
//! usage above requests first. For inodes: lower priority first, then more inodes first. For
//! process IDs: lower priority first, then more processes first. A pod whose usage could not
//! be measured goes before those that could, as upstream.

use std::cmp::Ordering;

use super::signals::{Resource, Signal};

/// What a pod uses of a resource and what its containers request of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Measured use.
    pub used: u64,
    /// The sum of its containers' requests (zero when none is set).
    pub requested: u64,
}

impl Usage {
    /// Whether it uses more than it requested.
    #[must_use]
    pub fn exceeds(self) -> bool {
        self.used > self.requested
    }

    /// How much it uses above its request (negative below), for ordering.
    #[must_use]
    pub fn above_request(self) -> i128 {
        i128::from(self.used) - i128::from(self.requested)
    }
}

/// Which of a pod's uses of local storage count when it is ranked for a disk signal, as
/// upstream ranks: with a dedicated image filesystem, `nodefs.*` counts the pod's logs and
/// volumes and `imagefs.*` (`containerfs.*`) its containers' writable layers; with one
/// filesystem for both (or when that is not known), all of them count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StorageParts {
    /// The containers' writable layers.
    pub layers: bool,
    /// The pod's logs and its disk-backed volumes (emptyDir, the API-backed ones).
    pub logs_and_volumes: bool,
}

impl StorageParts {
    /// What counts for `signal` with `dedicated_image_fs` (whether the images are on another
    /// filesystem than the root directory). Signals of other resources count everything;
    /// their ranking does not look at storage.
    #[must_use]
    pub fn of(signal: Signal, dedicated_image_fs: Option<bool>) -> Self {
        let dedicated = dedicated_image_fs == Some(true);
        match signal {
            Signal::NodeFsAvailable | Signal::NodeFsInodesFree if dedicated => StorageParts {
                layers: false,
                logs_and_volumes: true,
            },
            Signal::ImageFsAvailable
            | Signal::ImageFsInodesFree
            | Signal::ContainerFsAvailable
            | Signal::ContainerFsInodesFree
                if dedicated =>
            {
                StorageParts {
                    layers: true,
                    logs_and_volumes: false,
                }
            }
            _ => StorageParts {
                layers: true,
                logs_and_volumes: true,
            },
        }
    }
}

/// One pod as the ranking sees it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PodUsage {
    /// Which pod (its UID).
    pub uid: String,
    /// Its priority (`spec.priority`, zero when unset).
    pub priority: i32,
    /// Memory: the working set of its containers.
    pub memory: Option<Usage>,
    /// Local ephemeral storage: writable layers, logs and disk-backed volumes, in bytes.
    pub storage: Option<Usage>,
    /// Inodes of the same.
    pub inodes: Option<u64>,
    /// Processes in its containers.
    pub processes: Option<u64>,
}

/// Orders `pods` for a shortage of `resource`: the first is evicted first.
pub fn rank(resource: Resource, pods: &mut [PodUsage]) {
    pods.sort_by(|a, b| compare(resource, a, b));
}

fn compare(resource: Resource, a: &PodUsage, b: &PodUsage) -> Ordering {
    let priority = a.priority.cmp(&b.priority);
    match resource {
        Resource::Memory => by_requests(a.memory, b.memory)
            .then(priority)
            .then(by_excess(a.memory, b.memory)),
        Resource::EphemeralStorage => by_requests(a.storage, b.storage)
            .then(priority)
            .then(by_excess(a.storage, b.storage)),
        Resource::Inodes => priority.then(by_count(a.inodes, b.inodes)),
        Resource::Pids => priority.then(by_count(a.processes, b.processes)),
    }
}

/// Unmeasured first, then those above their requests.
fn by_requests(a: Option<Usage>, b: Option<Usage>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => b.exceeds().cmp(&a.exceeds()),
        (a, b) => a.is_some().cmp(&b.is_some()),
    }
}

/// Unmeasured first, then the larger use above requests.
fn by_excess(a: Option<Usage>, b: Option<Usage>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => b.above_request().cmp(&a.above_request()),
        (a, b) => a.is_some().cmp(&b.is_some()),
    }
}

/// Unmeasured first, then the larger count.
fn by_count(a: Option<u64>, b: Option<u64>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => b.cmp(&a),
        (a, b) => a.is_some().cmp(&b.is_some()),
    }
}
