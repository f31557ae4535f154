//! The labels and annotations sergeant puts on sandboxes and containers in the runtime.
//!
//! They are the only state sergeant keeps about a pod outside itself, so they are what a
//! restarted agent (or PLEG) reads to know which pod and container a runtime object belongs to,
//! its restart count and how to stop it. The `io.kubernetes.*` keys are the ones the upstream
//! kubelet uses, so tools such as crictl show sergeant's objects the same way.

/// Pod name (sandboxes and containers).
pub const POD_NAME: &str = "io.kubernetes.pod.name";
/// Pod namespace (sandboxes and containers).
pub const POD_NAMESPACE: &str = "io.kubernetes.pod.namespace";
/// Pod UID (sandboxes and containers).
pub const POD_UID: &str = "io.kubernetes.pod.uid";
/// Container name (containers).
pub const CONTAINER_NAME: &str = "io.kubernetes.container.name";
/// The node whose sergeant created the object (sandboxes and containers). It marks what
/// sergeant manages, and keeps several nodes sharing one runtime (hollow nodes, tests) apart:
/// a sergeant only ever lists, adopts or removes objects carrying its own node name.
pub const NODE: &str = "sergeant.dev/node";

/// Annotation: hash of the container spec it was created from; a changed spec means a new
/// container.
pub const CONTAINER_HASH: &str = "io.kubernetes.container.hash";
/// Annotation: how many times this container has been restarted before this instance.
pub const CONTAINER_RESTART_COUNT: &str = "io.kubernetes.container.restartCount";
/// Annotation: where the container writes its termination message.
pub const TERMINATION_MESSAGE_PATH: &str = "io.kubernetes.container.terminationMessagePath";
/// Annotation: `File` or `FallbackToLogsOnError`.
pub const TERMINATION_MESSAGE_POLICY: &str = "io.kubernetes.container.terminationMessagePolicy";
/// Annotation: the pod's termination grace period in seconds, to stop it after a restart.
pub const POD_TERMINATION_GRACE_PERIOD: &str = "io.kubernetes.pod.terminationGracePeriod";
/// Annotation: which kind of container this is: `init`, `sidecar` or `regular`.
pub const CONTAINER_KIND: &str = "sergeant.dev/container-kind";
/// Annotation: the memory request, in bytes, the container was made with ("0": none). No
/// cgroup shows a memory request, and a resize whose memory policy is `RestartContainer`
/// restarts the container when only the request changes (upstream reads it from its
/// actuated-state checkpoint); this is where a restarted agent finds it too.
pub const CONTAINER_MEMORY_REQUEST: &str = "sergeant.dev/memory-request";
