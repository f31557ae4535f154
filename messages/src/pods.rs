//! Pods as they travel between actors: their identity on this node, and the level-triggered
//! snapshots pod sources send to the pod manager.

use std::sync::Arc;

use actix::Message;
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

/// Everything one source wants on this node right now. Sources always send their whole view,
/// never deltas, so a lost or repeated snapshot does no harm.
#[derive(Debug, Clone)]
pub struct SourceSnapshot {
    /// Which source this is.
    pub source: PodSource,
    /// The pods it wants, each with its defaults applied.
    pub pods: Vec<Arc<core::Pod>>,
    /// The manifests it had to reject.
    pub rejected: Vec<RejectedManifest>,
}

impl Message for SourceSnapshot {
    type Result = ();
}
