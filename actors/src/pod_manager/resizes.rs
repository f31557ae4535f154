//! In-place resize admission in the pod manager (upstream's allocation manager): a pod actor
//! runs its pod with the resources the node allocated to it, which the pod's assignment holds
//! (its pod is `sergeant_core::allocation::with_allocation` of the source's). A resize the
//! source's pod asks for is allocated only once `sergeant_core::allocation::decide` says it
//! fits next to the other pods' allocations (and, with the
//! `InPlacePodLevelResourcesVerticalScaling` gate off, asks for no other pod-level resources);
//! until then the assignment carries why it waits
//! (`PodResizePending`: `Deferred`, or `Infeasible`, which is not tried again until the pod
//! asks for something else), with upstream's events and metrics. Waiting resizes are tried
//! at every look of the pod manager (a source changed, a pod went or finished), in upstream's
//! order, and every [`RETRY_PERIOD`]. Entry point: [`PodManager::allocate_resizes`], which
//! also keeps `kubelet_pod_pending_resizes`; [`observe_deferred`] times a deferred resize
//! that stops waiting.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::{AsyncContext, Context};
use sergeant_core::allocation::{
    decide, pending_event, priority_bucket, resize_requested, retry_order, started_event,
    with_allocation, Decision, PendingReason, PendingResize, ResizeCheck, RetryKey,
};
use sergeant_messages::pods::core::Pod;

use super::actor::PodManager;
use crate::events::{reason, EventType};
use crate::pod::worker::UpdatePod;

/// How often waiting resizes are tried when nothing else brings a look: upstream's retry
/// delay.
pub(super) const RETRY_PERIOD: Duration = Duration::from_secs(180);

/// What brought the look that tried the waiting resizes: the `retry_trigger` label of
/// `kubelet_pod_deferred_accepted_resizes_total`, as upstream names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RetryTrigger {
    /// A pod changed in its source (a resize asked for, say).
    PodUpdated,
    /// A pod is gone from its source or being deleted: what it held is free.
    PodsRemoved,
    /// Pods this node ran before a restart were admitted at their allocations, a resize of
    /// theirs waiting.
    PodsAdded,
    /// A pod finished (Succeeded or Failed): it holds nothing any more.
    PodTerminated,
    /// [`RETRY_PERIOD`] passed.
    Periodic,
}

impl RetryTrigger {
    fn label(self) -> &'static str {
        match self {
            RetryTrigger::PodUpdated => "pod_updated",
            RetryTrigger::PodsRemoved => "pods_removed",
            RetryTrigger::PodsAdded => "pods_added",
            RetryTrigger::PodTerminated => "pod_terminated",
            RetryTrigger::Periodic => "periodic_retry",
        }
    }
}

/// How a deferred resize stopped waiting: the `resolution` label of
/// `kubelet_pod_deferred_resize_duration_seconds`, as upstream names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Resolution {
    /// It was allocated.
    Accepted,
    /// The pod asked again for what it was allocated.
    Reverted,
    /// The pod finished or is being terminated.
    Terminated,
}

impl Resolution {
    fn label(self) -> &'static str {
        match self {
            Resolution::Accepted => "accepted",
            Resolution::Reverted => "reverted",
            Resolution::Terminated => "terminated",
        }
    }
}

/// Observes in `kubelet_pod_deferred_resize_duration_seconds` how long the resize `pending`
/// of `pod` waited, when it was deferred, now that it stops waiting as `resolution` says.
pub(super) fn observe_deferred(pending: Option<&PendingResize>, pod: &Pod, resolution: Resolution) {
    let Some(pending) = pending.filter(|p| p.reason == PendingReason::Deferred) else {
        return;
    };
    let priority = pod.spec.as_ref().and_then(|s| s.priority);
    metrics::histogram!(
        "kubelet_pod_deferred_resize_duration_seconds",
        "resolution" => resolution.label(),
        "priority_bucket" => priority_bucket(priority)
    )
    .record(pending.since.elapsed().as_secs_f64());
}

/// Describes the resize metrics, with upstream's help texts.
pub(super) fn describe_metrics() {
    metrics::describe_counter!(
        "kubelet_pod_infeasible_resizes_total",
        "Number of infeasible resizes for pods."
    );
    metrics::describe_counter!(
        "kubelet_pod_deferred_accepted_resizes_total",
        "Cumulative number of resizes that were accepted after being deferred."
    );
    metrics::describe_gauge!(
        "kubelet_pod_pending_resizes",
        "Number of pending resizes for pods, by reason (deferred, infeasible) and priority bucket."
    );
    metrics::describe_histogram!(
        "kubelet_pod_deferred_resize_duration_seconds",
        "Duration in seconds that a pod resize remains deferred before completion, by \
         resolution (accepted, reverted, terminated) and priority bucket."
    );
}

impl PodManager {
    /// Tries every resize the source's pods (`desired`, by UID) ask for and their pods were
    /// not allocated, in upstream's order, each against the allocations as the ones before it
    /// left them; `trigger` says what brought the look.
    pub(super) fn allocate_resizes(
        &mut self,
        desired: &BTreeMap<String, Arc<Pod>>,
        trigger: RetryTrigger,
    ) {
        let mut waiting: Vec<(RetryKey, String)> = {
            let assigned = self.deps.assignments.borrow();
            assigned
                .iter()
                .filter(|(uid, a)| a.terminating.is_none() && !self.has_finished(uid))
                .filter_map(|(uid, a)| {
                    let allocated = a.pod.as_ref()?;
                    let wanted = desired.get(uid)?;
                    let since = a.resize_pending.as_ref().map(|p| p.since);
                    resize_requested(allocated, wanted)
                        .then(|| (RetryKey::of(allocated, wanted, since), uid.clone()))
                })
                .collect()
        };
        waiting.sort_by(|a, b| retry_order(&a.0, &b.0));
        for (_, uid) in waiting {
            if let Some(wanted) = desired.get(&uid) {
                self.allocate_resize(&uid, wanted, trigger);
            }
        }
        self.count_pending();
    }

    /// Sets `kubelet_pod_pending_resizes` to the resizes that wait now, by reason and
    /// priority bucket; a series with none left goes to 0.
    fn count_pending(&mut self) {
        let mut counts: BTreeMap<(&'static str, &'static str), u32> = BTreeMap::new();
        for assignment in self.deps.assignments.borrow().values() {
            if let (Some(pending), Some(pod)) = (&assignment.resize_pending, &assignment.pod) {
                let priority = pod.spec.as_ref().and_then(|s| s.priority);
                let key = (pending.reason.metric_label(), priority_bucket(priority));
                *counts.entry(key).or_default() += 1;
            }
        }
        let series: BTreeSet<_> = counts.keys().copied().collect();
        let gone = self.pending_series.difference(&series).map(|key| (*key, 0));
        for ((reason, bucket), count) in gone.chain(counts) {
            metrics::gauge!(
                "kubelet_pod_pending_resizes",
                "reason" => reason,
                "priority_bucket" => bucket
            )
            .set(f64::from(count));
        }
        self.pending_series = series;
    }

    /// Pod `uid` finished: its resize no longer waits.
    pub(super) fn forget_resize(&mut self, uid: &str) {
        self.deps.assignments.send_if_modified(|assigned| {
            let Some(assignment) = assigned.get_mut(uid) else {
                return false;
            };
            let Some(pending) = assignment.resize_pending.take() else {
                return false;
            };
            if let Some(pod) = &assignment.pod {
                observe_deferred(Some(&pending), pod, Resolution::Terminated);
            }
            true
        });
        self.count_pending();
    }

    /// Whether some pod's resize waits.
    pub(super) fn resizes_wait(&self) -> bool {
        let assigned = self.deps.assignments.borrow();
        assigned.values().any(|a| a.resize_pending.is_some())
    }

    /// Tries the resize pod `uid` asks for (`wanted`): allocates it, or says why it waits.
    fn allocate_resize(&mut self, uid: &str, wanted: &Arc<Pod>, trigger: RetryTrigger) {
        let Some(node) = self.node.clone() else {
            return;
        };
        let Some((allocated, previous)) = self
            .deps
            .assignments
            .borrow()
            .get(uid)
            .and_then(|a| Some((Arc::clone(a.pod.as_ref()?), a.resize_pending.clone())))
        else {
            return;
        };
        let generation = wanted.metadata.generation;
        if previous
            .as_ref()
            .is_some_and(|p| p.reason == PendingReason::Infeasible && p.generation == generation)
        {
            // Not tried again until the pod asks for something else.
            return;
        }
        let others = self.admitted(Some(uid));
        let others: Vec<&Pod> = others.iter().map(AsRef::as_ref).collect();
        let pressure = self.deps.pressure.borrow().clone();
        let pod_level_resizes = self
            .deps
            .config
            .borrow()
            .active
            .kubelet
            .feature_enabled("InPlacePodLevelResourcesVerticalScaling");
        let decision = decide(&ResizeCheck {
            desired: wanted,
            allocated: &allocated,
            others: &others,
            capacity: self.capacity(&node),
            pressure: &pressure,
            os: node.os,
            pod_level_resizes,
        });
        let events = self.deps.events.for_pod(wanted);
        let (why, message) = match decision {
            Decision::Allocate => {
                tracing::info!(pod = %uid, "resize allocated");
                observe_deferred(previous.as_ref(), wanted, Resolution::Accepted);
                if previous
                    .as_ref()
                    .is_some_and(|p| p.reason == PendingReason::Deferred)
                {
                    metrics::counter!(
                        "kubelet_pod_deferred_accepted_resizes_total",
                        "retry_trigger" => trigger.label()
                    )
                    .increment(1);
                }
                events.pod(
                    EventType::Normal,
                    reason::RESIZE_STARTED,
                    started_event(wanted),
                );
                self.assign(uid, Arc::clone(wanted), None);
                return;
            }
            Decision::Deferred { message } => (PendingReason::Deferred, message),
            Decision::Infeasible { message, detail } => {
                metrics::counter!(
                    "kubelet_pod_infeasible_resizes_total",
                    "reason_detail" => detail
                )
                .increment(1);
                (PendingReason::Infeasible, message)
            }
        };
        let pending =
            PendingResize::after(previous.as_ref(), why, message, generation, Instant::now());
        if !pending.shows_otherwise(previous.as_ref()) {
            return;
        }
        tracing::info!(pod = %uid, reason = why.as_str(), "resize not allocated: {}", pending.message);
        if pending.is_news(previous.as_ref()) {
            let message = pending_event(wanted, &pending);
            let event = match why {
                PendingReason::Deferred => reason::RESIZE_DEFERRED,
                PendingReason::Infeasible => reason::RESIZE_INFEASIBLE,
            };
            events.pod(EventType::Warning, event, message);
        }
        let running = Arc::new(with_allocation(wanted, &allocated));
        self.assign(uid, running, Some(pending));
    }

    /// Has pod `uid` run `pod` with `resize_pending` shown: its assignment says so and its
    /// actor is told (a restarting one reads the assignment).
    fn assign(&mut self, uid: &str, pod: Arc<Pod>, resize_pending: Option<PendingResize>) {
        self.deps.assignments.send_modify(|assigned| {
            if let Some(assignment) = assigned.get_mut(uid) {
                assignment.pod = Some(Arc::clone(&pod));
                assignment.resize_pending.clone_from(&resize_pending);
            }
        });
        let update = UpdatePod {
            pod,
            resize_pending,
        };
        if let Some(Err(error)) = self.workers.get(uid).map(|w| w.tell(update)) {
            tracing::debug!(pod = %uid, "told at its next start instead: {error}");
        }
    }

    /// Tries the waiting resizes every [`RETRY_PERIOD`], when some wait.
    pub(super) fn retry_periodically(ctx: &mut Context<Self>) {
        ctx.run_interval(RETRY_PERIOD, |act, ctx| {
            if act.resizes_wait() {
                act.retry = Some(RetryTrigger::Periodic);
                act.reconcile(ctx);
            }
        });
    }
}
