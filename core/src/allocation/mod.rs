//! In-place resize admission (upstream's allocation manager): a pod runs with the resources
//! the node *allocated* to it, which a resize (the pod's `resize` subresource) changes only
//! once the node can give them. What a pod asks for and what it was allocated differ
//! ([`resize_requested`]) until the resize is allocated ([`decide`]: the node's allocatable
//! and the other pods' allocations, its pressure, its operating system); meanwhile the pod
//! runs with its allocation ([`with_allocation`]) and shows why the resize waits
//! ([`PendingResize`], its `PodResizePending` condition): `Deferred` (tried again as the
//! node's pods change, in [`retry_order`]) or `Infeasible` (not tried again until the pod
//! asks for something else). The events say so in upstream's words ([`pending_event`],
//! [`started_event`]); the metrics band pods by priority ([`priority_bucket`]). The
//! allocations outlive a restart in a checkpoint ([`Allocations`]).
//!
//! Entry points: [`decide`], asked by the pod manager for each resize it has not allocated;
//! [`with_allocation`], the pod it hands the pod actor.

mod bucket;
mod checkpoint;
mod decide;
mod message;
mod order;
mod view;

use std::time::Instant;

pub use bucket::priority_bucket;
pub use checkpoint::{Allocations, CheckpointError, CHECKPOINT_FILE};
pub use decide::{decide, Decision, ResizeCheck};
pub use message::{error_event, pending_event, started_event};
pub use order::{retry_order, RetryKey};
pub use view::{pod_level_resize_requested, resize_requested, with_allocation, PodAllocation};

/// Why a resize is not allocated: upstream's `PodResizePending` reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PendingReason {
    /// It does not fit now; it may once other pods give resources back.
    Deferred,
    /// It cannot be carried out on this node.
    Infeasible,
}

impl PendingReason {
    /// The condition's reason, as upstream writes it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            PendingReason::Deferred => "Deferred",
            PendingReason::Infeasible => "Infeasible",
        }
    }

    /// The `reason` label of `kubelet_pod_pending_resizes`: the reason in lower case, as
    /// upstream's.
    #[must_use]
    pub fn metric_label(self) -> &'static str {
        match self {
            PendingReason::Deferred => "deferred",
            PendingReason::Infeasible => "infeasible",
        }
    }
}

/// A resize the pod asks for that is not allocated, and why: what its `PodResizePending`
/// condition shows.
#[derive(Debug, Clone)]
pub struct PendingResize {
    /// `Deferred` or `Infeasible`.
    pub reason: PendingReason,
    /// Why, in upstream's words.
    pub message: String,
    /// The pod's generation it was decided for (the condition's `observedGeneration`).
    pub generation: Option<i64>,
    /// Since when it has been pending for this reason: the longest pending are tried first.
    pub since: Instant,
}

impl PendingResize {
    /// The resize pending for `reason` with `message` at `generation`, decided `now`: it keeps
    /// the time of `previous` when that was pending for the same reason, as upstream keeps the
    /// condition's transition time.
    #[must_use]
    pub fn after(
        previous: Option<&PendingResize>,
        reason: PendingReason,
        message: String,
        generation: Option<i64>,
        now: Instant,
    ) -> Self {
        let since = previous
            .filter(|p| p.reason == reason)
            .map_or(now, |p| p.since);
        Self {
            reason,
            message,
            generation,
            since,
        }
    }

    /// Whether this is news next to `previous`: newly pending, for another reason or another
    /// generation of the pod — when upstream records an event.
    #[must_use]
    pub fn is_news(&self, previous: Option<&PendingResize>) -> bool {
        previous.is_none_or(|p| p.reason != self.reason || p.generation != self.generation)
    }

    /// Whether the condition it shows differs from the one `previous` showed.
    #[must_use]
    pub fn shows_otherwise(&self, previous: Option<&PendingResize>) -> bool {
        self.is_news(previous) || previous.is_some_and(|p| p.message != self.message)
    }
}

#[cfg(test)]
mod tests;
