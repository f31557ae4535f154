//! Whether a resize the pod asks for is allocated now, as upstream's allocation manager
//! decides it with its admission handlers for a resize: refused for good (`Infeasible`) on a
//! node that cannot resize in place, or for a change of the pod-level `spec.resources` while
//! the `InPlacePodLevelResourcesVerticalScaling` gate is off; else checked as a pod's
//! admission is — the node's pressure conditions, then its requests against the allocatable
//! next to the other pods' allocations — and any refusal there only defers it (`Deferred`,
//! with the refusal's message): upstream defers even a resize past the node's allocatable (its
//! API server refuses such a resize first). Upstream's other infeasible resizes cannot arise
//! here: the static CPU and memory manager policies and `LimitedSwap` are refused by the
//! configuration, and memory-backed volumes are not resized (their gate is off).

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Pod;

use super::view::pod_level_resize_requested;
use crate::admission::{admit, Capacity};
use crate::context::NodeOs;
use crate::eviction::message;
use crate::eviction::signals::Pressure;

/// What a resize is decided from.
#[derive(Debug, Clone, Copy)]
pub struct ResizeCheck<'a> {
    /// The pod as it asks to be now.
    pub desired: &'a Pod,
    /// The pod with the resources it was allocated.
    pub allocated: &'a Pod,
    /// The other pods admitted to the node and not finished, each at its allocation.
    pub others: &'a [&'a Pod],
    /// What the node can hand out.
    pub capacity: Capacity,
    /// The pressure conditions the node reports.
    pub pressure: &'a BTreeSet<Pressure>,
    /// The node's operating system.
    pub os: NodeOs,
    /// Whether the `InPlacePodLevelResourcesVerticalScaling` feature gate is on: off, a
    /// resize of the pod-level `spec.resources` is infeasible.
    pub pod_level_resizes: bool,
}

/// What becomes of a resize.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// It fits: the pod is allocated what it asks for, and its actor applies it.
    Allocate,
    /// Not now, for the reason `message` says; tried again as the node's pods change.
    Deferred {
        /// Why, in upstream's words.
        message: String,
    },
    /// Never on this node; tried again only once the pod asks for something else.
    Infeasible {
        /// Why, in upstream's words.
        message: String,
        /// The `reason_detail` label of `kubelet_pod_infeasible_resizes_total`.
        detail: &'static str,
    },
}

/// Decides the resize `check.desired` asks for.
#[must_use]
pub fn decide(check: &ResizeCheck<'_>) -> Decision {
    if check.os == NodeOs::Windows {
        return Decision::Infeasible {
            message: "In-place pod resize is not supported on Windows".to_owned(),
            detail: "windows",
        };
    }
    if !check.pod_level_resizes && pod_level_resize_requested(check.allocated, check.desired) {
        return Decision::Infeasible {
            message: "InPlacePodLevelResourcesVerticalScaling is disabled".to_owned(),
            detail: "plr_feature_gate_off",
        };
    }
    let fits = message::admit(check.desired, check.pressure)
        .and_then(|()| admit(check.desired, check.others, check.capacity));
    match fits {
        Ok(()) => Decision::Allocate,
        Err(refusal) => Decision::Deferred {
            message: refusal.message,
        },
    }
}
