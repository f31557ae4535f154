//! Reading the runtime's readiness out of a CRI `Status` answer.
//!
//! Node readiness depends on exactly two conditions; this keeps their names and the "missing
//! means not ready" rule in one place.

use k8s_cri::v1::{RuntimeCondition, StatusResponse};

/// The condition type saying the runtime can run containers.
pub const RUNTIME_READY: &str = "RuntimeReady";
/// The condition type saying the pod network (CNI) is ready.
pub const NETWORK_READY: &str = "NetworkReady";

/// The two readiness conditions of a runtime, as reported by `Status`.
///
/// Exists so node status and the adapter read readiness the same way: a condition the runtime
/// did not report is `None`, and counts as not ready.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuntimeConditions {
    /// The `RuntimeReady` condition, if reported.
    pub runtime_ready: Option<RuntimeCondition>,
    /// The `NetworkReady` condition, if reported.
    pub network_ready: Option<RuntimeCondition>,
}

impl RuntimeConditions {
    /// Picks the readiness conditions out of a `Status` answer.
    #[must_use]
    pub fn from_status(response: &StatusResponse) -> Self {
        let find = |kind: &str| {
            response
                .status
                .as_ref()
                .and_then(|s| s.conditions.iter().find(|c| c.r#type == kind))
                .cloned()
        };
        Self {
            runtime_ready: find(RUNTIME_READY),
            network_ready: find(NETWORK_READY),
        }
    }

    /// True when the runtime reported `RuntimeReady=true`.
    #[must_use]
    pub fn is_runtime_ready(&self) -> bool {
        self.runtime_ready.as_ref().is_some_and(|c| c.status)
    }

    /// True when the runtime reported `NetworkReady=true`.
    #[must_use]
    pub fn is_network_ready(&self) -> bool {
        self.network_ready.as_ref().is_some_and(|c| c.status)
    }
}
