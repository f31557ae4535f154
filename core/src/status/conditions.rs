//! The pod conditions the kubelet owns, with their transition times, worded as upstream words
//! them (clients and upstream's e2e specs compare the messages).

use k8s_openapi::api::core::v1::{ContainerState, ContainerStatus, PodCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::container::Kind;
use super::phase;
use crate::allocation::PendingResize;

/// The sandbox is up and its network configured: containers can start.
pub(super) const READY_TO_START_CONTAINERS: &str = "PodReadyToStartContainers";
/// Every init container completed and every sidecar started.
pub(super) const INITIALIZED: &str = "Initialized";
/// Every sidecar and regular container is ready.
pub(super) const CONTAINERS_READY: &str = "ContainersReady";
/// The pod can serve: its containers are ready and every readiness gate's condition is true.
pub(super) const READY: &str = "Ready";
/// The pod is bound to this node, which is true of every pod the kubelet runs.
pub(super) const SCHEDULED: &str = "PodScheduled";
/// An in-place resize is being carried out, or (reason `Error`) could not be: present only
/// while so, as upstream.
pub(super) const RESIZE_IN_PROGRESS: &str = "PodResizeInProgress";
/// The reason of a resize that could not be carried out.
const RESIZE_ERROR: &str = "Error";
/// A resize the pod asks for is not allocated (reason `Deferred` or `Infeasible`): present
/// only while so, as upstream.
pub(super) const RESIZE_PENDING: &str = "PodResizePending";
/// The conditions the kubelet raises only while something lasts: one it no longer raises goes.
pub(super) const WHILE_SO: [&str; 2] = [RESIZE_IN_PROGRESS, RESIZE_PENDING];

/// What the conditions are computed from.
pub(super) struct Facts<'a> {
    /// The sandbox is ready and has its network.
    pub ready_to_start_containers: bool,
    /// Init containers not completed and sidecars never started, in spec order.
    pub not_initialized: Vec<&'a str>,
    /// Sidecars and regular containers that are not ready, in spec order.
    pub not_ready: Vec<&'a str>,
    /// The condition types of the pod's readiness gates, in spec order.
    pub readiness_gates: Vec<&'a str>,
    /// The gates' conditions in the API server, set by other clients.
    pub api_conditions: &'a [PodCondition],
    /// The pod's phase.
    pub phase: &'static str,
    /// `AllContainersRestarting`, for a pod with a `RestartAllContainers` rule.
    pub restarting_all: Option<PodCondition>,
    /// Why the pod's in-place resize could not be carried out, when it could not.
    pub resize_error: Option<&'a str>,
    /// The resize the pod asks for that is not allocated, and why.
    pub resize_pending: Option<&'a PendingResize>,
}

/// The init containers that keep the pod from being initialized: a plain init container until
/// it exits 0, a sidecar until it has started once (a sidecar restarting later does not undo
/// initialization).
pub(super) fn not_initialized(init: &[(Kind, ContainerStatus)]) -> Vec<&str> {
    init.iter()
        .filter(|(kind, status)| {
            let exit = |state: &Option<ContainerState>| {
                state.as_ref()?.terminated.as_ref().map(|t| t.exit_code)
            };
            match kind {
                Kind::Init => exit(&status.state) != Some(0),
                Kind::Sidecar | Kind::Regular | Kind::Ephemeral => {
                    let ran_before =
                        exit(&status.state).is_some() || exit(&status.last_state).is_some();
                    status.started != Some(true) && !ran_before
                }
            }
        })
        .map(|(_, status)| status.name.as_str())
        .collect()
}

/// The sidecars and regular containers that are not ready.
pub(super) fn not_ready<'a>(
    init: &'a [(Kind, ContainerStatus)],
    regular: &'a [ContainerStatus],
) -> Vec<&'a str> {
    init.iter()
        .filter(|(kind, _)| *kind == Kind::Sidecar)
        .map(|(_, status)| status)
        .chain(regular)
        .filter(|status| !status.ready)
        .map(|status| status.name.as_str())
        .collect()
}

/// The kubelet's conditions from `facts`, followed by the `previous` conditions it does not own
/// (readiness gates, disruption targets…). A condition keeps its previous transition time while
/// its status stays the same; a new or changed one is stamped `now`.
pub(super) fn build(
    facts: &Facts<'_>,
    previous: &[PodCondition],
    now: &Time,
    generation: Option<i64>,
) -> Vec<PodCondition> {
    let completed = facts.phase == phase::SUCCEEDED;
    let ready = if completed {
        condition(CONTAINERS_READY, false, Some("PodCompleted"), None)
    } else if facts.not_ready.is_empty() {
        condition(CONTAINERS_READY, true, None, None)
    } else {
        let message = format!(
            "containers with unready status: [{}]",
            facts.not_ready.join(" ")
        );
        condition(
            CONTAINERS_READY,
            false,
            Some("ContainersNotReady"),
            Some(message),
        )
    };
    // Once initialized, a pod stays so while a reset in place runs its init containers again.
    let was_initialized = previous
        .iter()
        .any(|c| c.type_ == INITIALIZED && c.status == "True");
    let initialized = if facts.not_initialized.is_empty() || was_initialized {
        condition(INITIALIZED, true, completed.then_some("PodCompleted"), None)
    } else {
        let message = format!(
            "containers with incomplete status: [{}]",
            facts.not_initialized.join(" ")
        );
        condition(
            INITIALIZED,
            false,
            Some("ContainersNotInitialized"),
            Some(message),
        )
    };
    let owned: Vec<PodCondition> = [
        condition(
            READY_TO_START_CONTAINERS,
            facts.ready_to_start_containers,
            None,
            None,
        ),
        initialized,
        pod_ready(&ready, facts, previous),
        ready,
        condition(SCHEDULED, true, None, None),
    ]
    .into_iter()
    .chain(facts.restarting_all.clone())
    .chain(facts.resize_error.map(|why| {
        condition(
            RESIZE_IN_PROGRESS,
            true,
            Some(RESIZE_ERROR),
            Some(why.to_owned()),
        )
    }))
    .chain(facts.resize_pending.map(|pending| {
        condition(
            RESIZE_PENDING,
            true,
            Some(pending.reason.as_str()),
            Some(pending.message.clone()),
        )
    }))
    .collect();
    // A resize condition not raised now is over: it goes, not kept as another client's.
    let others = previous
        .iter()
        .filter(|p| !WHILE_SO.contains(&p.type_.as_str()))
        .filter(|p| !owned.iter().any(|o| o.type_ == p.type_))
        .cloned()
        .collect::<Vec<_>>();
    owned
        .into_iter()
        .map(|mut c| {
            // A pending resize's condition is new when its reason changes, as upstream's.
            let same = |p: &PodCondition| {
                p.type_ == c.type_
                    && p.status == c.status
                    && (c.type_ != RESIZE_PENDING || p.reason == c.reason)
            };
            let kept = previous
                .iter()
                .find(|p| same(p))
                .and_then(|p| p.last_transition_time.clone());
            c.last_transition_time = Some(kept.unwrap_or_else(|| now.clone()));
            c.observed_generation = generation;
            c
        })
        .chain(others)
        .collect()
}

/// `Ready`: `ContainersReady` while that is not true, else false while a readiness gate's
/// condition (set by some other client: found in the API server's conditions, else in
/// `previous`) is missing or not true.
fn pod_ready(
    containers_ready: &PodCondition,
    facts: &Facts<'_>,
    previous: &[PodCondition],
) -> PodCondition {
    if containers_ready.status != "True" {
        return PodCondition {
            type_: READY.to_owned(),
            ..containers_ready.clone()
        };
    }
    let find = |gate: &str| {
        let mut all = facts.api_conditions.iter().chain(previous);
        all.find(|c| c.type_ == gate)
    };
    let unready: String = facts
        .readiness_gates
        .iter()
        .filter_map(|gate| match find(gate) {
            None => Some(format!(
                "corresponding condition of pod readiness gate {gate:?} does not exist."
            )),
            Some(c) if c.status != "True" => Some(format!(
                "the status of pod readiness gate {gate:?} is not \"True\", but {}",
                c.status
            )),
            Some(_) => None,
        })
        .collect();
    if unready.is_empty() {
        condition(READY, true, None, None)
    } else {
        condition(READY, false, Some("ReadinessGatesNotReady"), Some(unready))
    }
}

fn condition(
    type_: &str,
    status: bool,
    reason: Option<&str>,
    message: Option<String>,
) -> PodCondition {
    PodCondition {
        type_: type_.to_owned(),
        status: if status { "True" } else { "False" }.to_owned(),
        reason: reason.map(str::to_owned),
        message,
        ..PodCondition::default()
    }
}

#[cfg(test)]
#[path = "conditions_tests.rs"]
mod tests;
