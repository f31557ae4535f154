//! Pods as they travel between actors: their identity on this node, and the level-triggered
//! snapshots pod sources send to the pod manager.

use std::sync::Arc;

pub use k8s_openapi::api::core::v1 as core;
use serde::Serialize;

/// The identity of one pod on this node. The UID tells apart two pods that reuse a name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct PodKey {
    /// The pod's namespace.
    pub namespace: String,
    /// The pod's name (for static pods, with the `-<node name>` suffix).
    pub name: String,
    /// The pod's UID.
    pub uid: String,
}

impl std::fmt::Display for PodKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{} ({})", self.namespace, self.name, self.uid)
    }
}

impl SourceSnapshot {
    /// The view of a source that has not read anything yet.
    #[must_use]
    pub fn unsynced(source: PodSource) -> Self {
        Self {
            synced: false,
            source,
            pods: Vec::new(),
            rejected: Vec::new(),
        }
    }
}

/// Where a pod came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PodSource {
    /// A manifest in `staticPodPath`.
    File,
    /// The API server (pods bound to this node).
    Api,
}

/// A manifest a source could not turn into a pod, kept so operators can see why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RejectedManifest {
    /// The file (or object) the manifest came from.
    pub origin: String,
    /// The precise error: file, field and reason.
    pub error: String,
}

/// Everything one source wants on this node right now. Sources always publish their whole
/// view, never deltas, so a lost or repeated snapshot does no harm.
#[derive(Debug, Clone)]
pub struct SourceSnapshot {
    /// False until the source has read everything once. The pod manager removes no pod that
    /// runs on the node before every source is synced, so a restart never kills what it
    /// has not seen yet.
    pub synced: bool,
    /// Which source this is.
    pub source: PodSource,
    /// The pods it wants, each with its defaults applied.
    pub pods: Vec<Arc<core::Pod>>,
    /// The manifests it had to reject.
    pub rejected: Vec<RejectedManifest>,
}

/// A pod actor's latest view of its pod, status included, for the pod manager (which forwards
/// the status and keeps it for `/pods`).
#[derive(Debug, Clone)]
pub struct PodReport {
    /// Which pod.
    pub key: PodKey,
    /// The pod with its computed status.
    pub pod: Arc<core::Pod>,
}

impl actix::Message for PodReport {
    type Result = ();
}

/// A pod actor finished terminating its pod: the pod manager forgets it.
#[derive(Debug, Clone)]
pub struct PodTerminated {
    /// Which pod.
    pub key: PodKey,
}

impl actix::Message for PodTerminated {
    type Result = ();
}
