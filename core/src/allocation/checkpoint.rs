//! The node's allocations as they outlive the process (upstream's allocation checkpoint):
//! what each pod, by UID, was allocated. A restarted sergeant admits a pod it ran before at
//! its allocation — not at a resize that was waiting, which might not fit — and tries that
//! resize again. The pod manager writes it (JSON) as the allocations change, once every pod
//! source has been read, and reads it when it starts.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use serde::{Deserialize, Serialize};

use super::view::PodAllocation;

/// The name of the checkpoint file in the root directory.
pub const CHECKPOINT_FILE: &str = "allocated_pods.json";

/// Each pod's allocation, by pod UID.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Allocations(BTreeMap<String, PodAllocation>);

/// Why a checkpoint could not be read or written.
#[derive(Debug, thiserror::Error)]
#[error("the allocation checkpoint is not valid JSON of allocations: {0}")]
pub struct CheckpointError(#[from] serde_json::Error);

impl Allocations {
    /// The allocations of `pods`, each a UID and the pod at its allocation.
    pub fn of<'a>(pods: impl IntoIterator<Item = (&'a str, &'a Pod)>) -> Self {
        Self(
            pods.into_iter()
                .map(|(uid, pod)| (uid.to_owned(), PodAllocation::of(pod)))
                .collect(),
        )
    }

    /// The allocations a checkpoint holds.
    ///
    /// # Errors
    /// The checkpoint is not JSON of allocations.
    pub fn parse(bytes: &[u8]) -> Result<Self, CheckpointError> {
        Ok(serde_json::from_slice(bytes)?)
    }

    /// The checkpoint of these allocations.
    ///
    /// # Errors
    /// Never in practice: the allocations are plain maps of resource lists.
    pub fn to_bytes(&self) -> Result<Vec<u8>, CheckpointError> {
        Ok(serde_json::to_vec(self)?)
    }

    /// `desired` at the allocation recorded for pod `uid`, when one is.
    #[must_use]
    pub fn apply(&self, uid: &str, desired: &Pod) -> Option<Pod> {
        self.0.get(uid).map(|allocation| allocation.apply(desired))
    }
}
