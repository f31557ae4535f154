//! sergeant's pure kubelet logic: what to do with a pod, decided from what is wanted and what
//! the runtime shows, with no actors, no runtime calls and no I/O.
//!
//! Entry point: [`plan::plan`], upstream's computePodActions in sergeant's terms — from a pod,
//! the runtime's view of it ([`runtime::PodRuntime`]), the container back-offs
//! ([`backoff::Backoff`]) and the probe verdicts, the [`plan::PodActions`] a pod actor then
//! executes. Around it: the container kinds and their start order ([`kind`]), the spec hash that
//! tells a changed container ([`hash`]), and the labels that tie runtime objects to pods
//! ([`labels`]). The pod's translation into CRI configurations ([`spec`]), its volumes as
//! decided from the spec ([`volumes`]), what both read besides the spec ([`context`]: the
//! pod's identity, its node, the API objects it refers to), its status from what the runtime
//! shows ([`status`]), the node's allocatable resources ([`allocatable`]) and the name rules of
//! the API ([`names`]) are here too.

/// The Kubernetes release sergeant acts as the kubelet of (the control plane the tests run is
/// built from the same release, `tests/control-plane/VERSION`): `nodeInfo.kubeletVersion`.
pub const KUBERNETES_VERSION: &str = "v1.37.2";
/// Its `major.minor`, as user agents such as `kube-probe/1.37` carry it.
pub const KUBERNETES_MINOR: &str = "1.37";

pub mod admission;
pub mod allocatable;
pub mod allocation;
pub mod backoff;
pub mod cni;
pub mod context;
pub mod credentials;
pub mod events;
pub mod eviction;
pub mod gc;
pub mod hash;
pub mod kind;
pub mod labels;
pub mod limits;
pub mod located;
pub mod manifest;
pub mod mirror;
pub mod names;
pub mod node_status;
pub mod plan;
pub mod pleg;
pub mod pod_update;
pub mod probe;
pub mod rate;
pub mod resize;
pub mod resize_memory;
pub mod restart;
pub mod runtime;
pub mod runtime_class;
pub mod source;
pub mod spec;
pub mod stats;
pub mod status;
pub mod sysctls;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod time;
pub mod validate;
pub mod volumes;
