//! What one event says: the object it is about, its type, reason and message. The reasons are
//! upstream's (`pkg/kubelet/events`), so `kubectl describe`, dashboards and alerts read the same
//! as with the kubelet.

use std::time::SystemTime;

/// Upstream's two event types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventType {
    /// Something expected happened (a pull, a start).
    Normal,
    /// Something went wrong (a failed pull, a failed probe).
    Warning,
}

impl EventType {
    /// The API's spelling (`type`).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Normal => "Normal",
            Self::Warning => "Warning",
        }
    }
}

/// The kubelet reasons sergeant emits, spelled as upstream.
pub mod reason {
    /// An image pull begins.
    pub const PULLING: &str = "Pulling";
    /// An image was pulled, or was already present.
    pub const PULLED: &str = "Pulled";
    /// A pull, create or start failed.
    pub const FAILED: &str = "Failed";
    /// A pull or a restart waits out its back-off.
    pub const BACK_OFF: &str = "BackOff";
    /// An image is missing and its pull policy is `Never`.
    pub const ERR_IMAGE_NEVER_PULL: &str = "ErrImageNeverPull";
    /// A container was created.
    pub const CREATED: &str = "Created";
    /// A container was started.
    pub const STARTED: &str = "Started";
    /// A container is being stopped.
    pub const KILLING: &str = "Killing";
    /// A probe failed.
    pub const UNHEALTHY: &str = "Unhealthy";
    /// A probe passed with a warning (an HTTP redirect to another host, not followed).
    pub const PROBE_WARNING: &str = "ProbeWarning";
    /// A postStart hook failed.
    pub const FAILED_POST_START_HOOK: &str = "FailedPostStartHook";
    /// A preStop hook failed.
    pub const FAILED_PRE_STOP_HOOK: &str = "FailedPreStopHook";
    /// A volume could not be set up (or updated) for the pod.
    pub const FAILED_MOUNT: &str = "FailedMount";
    /// The pod's sandbox could not be made (its RuntimeClass cannot be resolved).
    pub const FAILED_CREATE_POD_SANDBOX: &str = "FailedCreatePodSandBox";
    /// Some image pull secrets of the pod could not be read; pulls go on without them.
    pub const FAILED_TO_RETRIEVE_IMAGE_PULL_SECRET: &str = "FailedToRetrieveImagePullSecret";
    /// The pod could not be synced: its pod actor failed more often than its restart
    /// intensity allows and is tried again later.
    pub const FAILED_SYNC: &str = "FailedSync";
    /// A resize the pod asks for does not fit now (`PodResizePending`, reason `Deferred`).
    pub const RESIZE_DEFERRED: &str = "ResizeDeferred";
    /// A resize the pod asks for cannot be carried out on the node (reason `Infeasible`).
    pub const RESIZE_INFEASIBLE: &str = "ResizeInfeasible";
    /// A resize was allocated: the pod actor applies it.
    pub const RESIZE_STARTED: &str = "ResizeStarted";
    /// An allocated resize could not be carried out (`PodResizeInProgress`, reason `Error`).
    pub const RESIZE_ERROR: &str = "ResizeError";
    /// Image garbage collection could not free what the high threshold asked for (node).
    pub const FREE_DISK_SPACE_FAILED: &str = "FreeDiskSpaceFailed";
    /// Image garbage collection failed twice in a row (node).
    pub const IMAGE_GC_FAILED: &str = "ImageGCFailed";
    /// The image filesystem reports no capacity (node).
    pub const INVALID_DISK_CAPACITY: &str = "InvalidDiskCapacity";
}

/// The kind of object an event is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ObjectKind {
    /// A pod or one of its containers.
    Pod,
    /// The node itself (image garbage collection), as upstream's node reference.
    Node,
}

impl ObjectKind {
    /// The API's spelling (`involvedObject.kind`).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Pod => "Pod",
            Self::Node => "Node",
        }
    }
}

/// The object an event is about: a pod, one of its containers (`field_path`), or the node.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Involved {
    /// A pod or the node.
    pub kind: ObjectKind,
    /// The pod's namespace (where the event is written; `default` for the node's, as
    /// upstream).
    pub namespace: String,
    /// The pod's name, or the node's.
    pub name: String,
    /// The pod's UID, or the node's name (upstream's node reference has no UID).
    pub uid: String,
    /// `spec.containers{name}` (or `spec.initContainers{name}`) for a container's event.
    pub field_path: Option<String>,
}

/// One event as a pod actor reports it to the recorder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// What it is about.
    pub object: Involved,
    /// Normal or Warning.
    pub kind: EventType,
    /// One of [`reason`].
    pub reason: &'static str,
    /// Upstream's wording.
    pub message: String,
    /// When it happened.
    pub at: SystemTime,
}
