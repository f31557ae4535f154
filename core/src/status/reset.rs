//! The status of a pod reset in place by a `RestartAllContainers` rule (KEP-5532), as
//! upstream's kubelet reports it: the `AllContainersRestarting` condition, true from the exit
//! that sets the reset off until every container is out of the runtime; the containers taken
//! out shown waiting, `RestartingAllContainers`, each counted as restarted once; and what their
//! statuses keep from before once the runtime no longer has their older instances.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateTerminated, ContainerStateWaiting, ContainerStatus, PodCondition,
    PodSpec, PodStatus,
};

use super::runtime::{self, Attempts};
use super::Knowledge;
use crate::restart::{may_restart_all, pod_policy, restarts_all, RestartGates};

/// The pod condition: its containers are being taken out to be started afresh.
pub(super) const ALL_CONTAINERS_RESTARTING: &str = "AllContainersRestarting";
/// The reason of the condition while true.
const STARTED: &str = "RestartAllContainersStarted";
/// The reason a container taken out by the reset gives (waiting, and as its last state).
pub(super) const RESTARTING_ALL: &str = "RestartingAllContainers";
/// What a container taken out by the reset says.
const REMOVED: &str = "The container is removed because RestartAllContainers in place";
/// The exit code shown for a container the reset killed or removed.
const REMOVED_EXIT_CODE: i32 = 137;

/// Whether the pod is being reset: the pod actor says a sync is taking its containers out, or
/// the runtime shows an exit that sets a reset off, or the previous status did (its condition was
/// true, or it showed such an exit).
pub(super) fn restarting(
    spec: &PodSpec,
    attempts: &BTreeMap<&str, Attempts<'_>>,
    previous: &PodStatus,
    knowledge: &Knowledge,
) -> bool {
    let pod = pod_policy(Some(spec), knowledge.restart_gates);
    if !may_restart_all(spec, knowledge.restart_gates) {
        return false;
    }
    let containers = || {
        spec.init_containers
            .iter()
            .flatten()
            .chain(&spec.containers)
    };
    let in_runtime = containers().any(|c| {
        attempts.get(c.name.as_str()).is_some_and(|a| {
            runtime::state(a.latest) == k8s_cri::v1::ContainerState::ContainerExited
                && restarts_all(pod, c, a.latest.exit_code)
        })
    });
    let condition_was_true = previous
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_ == ALL_CONTAINERS_RESTARTING && c.status == "True");
    let previous_statuses = || {
        let init = previous.init_container_statuses.iter().flatten();
        init.chain(previous.container_statuses.iter().flatten())
    };
    let shown_before = containers().any(|c| {
        previous_statuses().any(|s| {
            s.name == c.name
                && s.state
                    .as_ref()
                    .and_then(|state| state.terminated.as_ref())
                    .is_some_and(|t| restarts_all(pod, c, t.exit_code))
        })
    });
    knowledge.resetting || in_runtime || condition_was_true || shown_before
}

/// The `AllContainersRestarting` condition of a pod that has a `RestartAllContainers` rule
/// (none otherwise): true while the reset has containers left to take out; false once none is
/// left, or when the pod is over.
pub(super) fn condition(
    spec: &PodSpec,
    attempts: &BTreeMap<&str, Attempts<'_>>,
    restarting: bool,
    phase: &str,
    gates: RestartGates,
) -> Option<PodCondition> {
    if !may_restart_all(spec, gates) {
        return None;
    }
    let reason = match phase {
        super::phase::SUCCEEDED => Some("PodCompleted"),
        super::phase::FAILED => Some("PodFailed"),
        _ => None,
    };
    let containers = spec
        .init_containers
        .iter()
        .flatten()
        .chain(&spec.containers);
    let left = containers
        .into_iter()
        .any(|c| attempts.contains_key(c.name.as_str()));
    let true_now = reason.is_none() && restarting && left;
    Some(PodCondition {
        type_: ALL_CONTAINERS_RESTARTING.to_owned(),
        status: if true_now { "True" } else { "False" }.to_owned(),
        reason: if true_now { Some(STARTED) } else { reason }.map(str::to_owned),
        message: true_now.then(|| "container exited with restart policy rule".to_owned()),
        ..PodCondition::default()
    })
}

/// The status of a container the runtime no longer has, from its `previous` one: while the
/// pod is being reset, one that was not waiting is shown waiting and counted as restarted;
/// one already shown so (waiting, since removed by the reset) keeps that count and last state. `None`: the reset has nothing to say.
pub(super) fn removed(
    previous: &ContainerStatus,
    restarting: bool,
) -> Option<(ContainerState, ContainerState, i32)> {
    let waiting = previous.state.as_ref().and_then(|s| s.waiting.as_ref());
    if restarting && waiting.is_none() {
        let last = ContainerState {
            terminated: Some(ContainerStateTerminated {
                exit_code: REMOVED_EXIT_CODE,
                reason: Some(RESTARTING_ALL.to_owned()),
                message: Some(REMOVED.to_owned()),
                ..ContainerStateTerminated::default()
            }),
            ..ContainerState::default()
        };
        let state = ContainerState {
            waiting: Some(ContainerStateWaiting {
                reason: Some(RESTARTING_ALL.to_owned()),
                message: Some(REMOVED.to_owned()),
            }),
            ..ContainerState::default()
        };
        return Some((state, last, previous.restart_count.saturating_add(1)));
    }
    let last_removed = previous
        .last_state
        .as_ref()
        .and_then(|s| s.terminated.as_ref())
        .is_some_and(removed_by_reset);
    let removed_before = waiting.is_some_and(|w| w.reason.as_deref() == Some(RESTARTING_ALL));
    (waiting.is_some() && (removed_before || last_removed)).then(|| {
        let last = previous.last_state.clone().unwrap_or_default();
        (ContainerState::default(), last, previous.restart_count)
    })
}

/// What a container's status keeps from its `previous` one, as upstream's: the restart count
/// never goes down, and counts one more for an instance running after one shown terminated;
/// a last state the runtime cannot give (a reset removed the older instances) is the previous
/// status's terminated state, of another instance, or else its last state.
pub(super) fn keep(previous: &ContainerStatus, status: &mut ContainerStatus) {
    let was_terminated = |s: &Option<ContainerState>| s.as_ref().and_then(|s| s.terminated.clone());
    let running = status.state.as_ref().is_some_and(|s| s.running.is_some());
    let previous_terminated = was_terminated(&previous.state);
    if running && previous_terminated.is_some() && previous.restart_count >= status.restart_count {
        status.restart_count = previous.restart_count.saturating_add(1);
    }
    status.restart_count = status.restart_count.max(previous.restart_count);
    if was_terminated(&status.last_state).is_some() {
        return;
    }
    let carried = previous_terminated
        .filter(|_| previous.container_id != status.container_id)
        .or_else(|| was_terminated(&previous.last_state));
    if let Some(terminated) = carried {
        status.last_state = Some(ContainerState {
            terminated: Some(terminated),
            ..ContainerState::default()
        });
    }
}

/// Whether the last state of `status` is a removal by the reset: such an exit does not fail
/// the pod, the reset starts the container again.
pub(super) fn removed_by_reset(terminated: &ContainerStateTerminated) -> bool {
    terminated.reason.as_deref() == Some(RESTARTING_ALL)
}

#[cfg(test)]
#[path = "reset_tests.rs"]
mod tests;
