//! The order pending resizes are tried in, as upstream sorts them: those that ask for no more
//! cpu or memory first (they always fit), then by the pod's priority (highest first), then
//! Guaranteed pods before the others, then the longest pending first (one not pending yet
//! last).

use std::cmp::Ordering;
use std::time::Instant;

use k8s_openapi::api::core::v1::Pod;

use crate::spec::{pod_requests, qos_class, QosClass};

/// What a pending resize is ordered by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryKey {
    /// It asks for more cpu or memory than the pod was allocated.
    pub increasing: bool,
    /// The pod's priority (0 when it has none).
    pub priority: i32,
    /// The pod is Guaranteed.
    pub guaranteed: bool,
    /// Since when it has been pending; `None` when it is not yet.
    pub pending_since: Option<Instant>,
}

impl RetryKey {
    /// The key of the resize `desired` asks for, `allocated` being the pod as allocated now.
    #[must_use]
    pub fn of(allocated: &Pod, desired: &Pod, pending_since: Option<Instant>) -> Self {
        let (given, wanted) = (pod_requests(allocated), pod_requests(desired));
        let grows = |name: &str| wanted.get(name) > given.get(name);
        Self {
            increasing: grows("cpu") || grows("memory"),
            priority: desired.spec.as_ref().and_then(|s| s.priority).unwrap_or(0),
            guaranteed: qos_class(desired) == QosClass::Guaranteed,
            pending_since,
        }
    }
}

/// How `a` and `b` are ordered: the one to try first is the lesser.
#[must_use]
pub fn retry_order(a: &RetryKey, b: &RetryKey) -> Ordering {
    let pending = match (a.pending_since, b.pending_since) {
        (Some(a), Some(b)) => a.cmp(&b),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    };
    a.increasing
        .cmp(&b.increasing)
        .then(b.priority.cmp(&a.priority))
        .then(b.guaranteed.cmp(&a.guaranteed))
        .then(pending)
}
