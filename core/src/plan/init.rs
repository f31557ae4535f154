//! The init half of the plan, in a ready sandbox: init containers one at a time and in order,
//! sidecars started and kept running, and whether the regular containers may go.

use k8s_cri::v1 as cri;
use k8s_openapi::api::core::v1::Container;

use super::step::{definition_changed, has_stopped, kill, start_or_wait};
use super::{FailedProbe, KillReason, PlanInput, PodActions};
use crate::kind::{init_containers, regular_containers, ContainerKind};
use crate::resize::needs_restart;
use crate::restart::{container_policy, pod_policy, restarts_after_exit, RestartPolicy};
use crate::runtime::ObservedContainer;

/// Where the pod stands after its init containers were looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// Every init container finished and every sidecar is started: regular containers may run.
    Done,
    /// An init container or sidecar is still on its way (or was just started, or killed).
    Pending,
}

/// Plans the init containers of the pod in the ready sandbox `sandbox_id`.
///
/// Once a regular container has run in the sandbox, the init containers are done for good
/// (their exited instances may have been garbage-collected since): only sidecars are still
/// looked after, and they no longer hold anything up.
pub(super) fn plan(input: &PlanInput<'_>, sandbox_id: &str, actions: &mut PodActions) -> Phase {
    let regulars_began =
        regular_containers(input.pod).any(|c| input.runtime.latest(sandbox_id, &c.name).is_some());
    for (container, kind) in init_containers(input.pod) {
        let latest = input.runtime.latest(sandbox_id, &container.name);
        let go_on = match kind {
            ContainerKind::Sidecar => sidecar(input, container, latest, actions) || regulars_began,
            _ => regulars_began || init(input, container, latest, actions),
        };
        if !go_on {
            return Phase::Pending;
        }
    }
    Phase::Done
}

/// A run-to-completion init container; true when it has completed.
fn init(
    input: &PlanInput<'_>,
    container: &Container,
    latest: Option<&ObservedContainer>,
    actions: &mut PodActions,
) -> bool {
    let Some(observed) = latest else {
        start_or_wait(input, container, ContainerKind::Init, None, actions);
        return false;
    };
    match observed.state() {
        cri::ContainerState::ContainerExited if observed.status.exit_code == 0 => true,
        cri::ContainerState::ContainerRunning => false,
        cri::ContainerState::ContainerCreated => {
            actions.remove.push(observed.status.id.clone());
            start_or_wait(input, container, ContainerKind::Init, None, actions);
            false
        }
        _ if !runs_again(input, container, observed) => {
            // A failed init container that will not run again (of a Never pod, or by its own
            // policy or restart rules) fails the pod.
            actions.kill_pod = true;
            false
        }
        _ => {
            if observed.state() == cri::ContainerState::ContainerUnknown {
                kill(
                    input,
                    observed,
                    container,
                    ContainerKind::Init,
                    KillReason::UnknownState,
                    true,
                    actions,
                );
            }
            start_or_wait(
                input,
                container,
                ContainerKind::Init,
                Some(observed),
                actions,
            );
            false
        }
    }
}

/// Whether the failed init container `observed` (exited non-zero, or in an unknown state) runs
/// again: an exit as its restart rules and policy say; an unknown state unless its policy is
/// `Never`.
fn runs_again(input: &PlanInput<'_>, container: &Container, observed: &ObservedContainer) -> bool {
    let policy = pod_policy(input.pod.spec.as_ref(), input.gates);
    if observed.state() == cri::ContainerState::ContainerExited {
        restarts_after_exit(policy, container, observed.status.exit_code)
    } else {
        container_policy(policy, container) != RestartPolicy::Never
    }
}

/// A sidecar; true when it is running and past its startup probe, so the next one may start.
fn sidecar(
    input: &PlanInput<'_>,
    container: &Container,
    latest: Option<&ObservedContainer>,
    actions: &mut PodActions,
) -> bool {
    let kind = ContainerKind::Sidecar;
    let Some(observed) = latest else {
        start_or_wait(input, container, kind, None, actions);
        return false;
    };
    match observed.state() {
        cri::ContainerState::ContainerRunning => {
            let id = &observed.status.id;
            let failed = input.probes.failed.get(id).map(|f| f.probe);
            let reason = if definition_changed(observed, container) {
                Some(KillReason::DefinitionChanged)
            } else if needs_restart(input.pod, observed, container) {
                Some(KillReason::Resize)
            } else {
                failed.map(|probe| match probe {
                    FailedProbe::Liveness => KillReason::Liveness,
                    FailedProbe::Startup => KillReason::Startup,
                })
            };
            if let Some(reason) = reason {
                // Sidecars restart whatever the pod's policy.
                kill(input, observed, container, kind, reason, true, actions);
                // A probe kill counts for the back-off; a new definition or a resize starts
                // afresh.
                let fresh = matches!(reason, KillReason::DefinitionChanged | KillReason::Resize);
                let ended = (!fresh).then_some(observed);
                start_or_wait(input, container, kind, ended, actions);
                return false;
            }
            container.startup_probe.is_none() || input.probes.started.contains(id)
        }
        cri::ContainerState::ContainerCreated => {
            actions.remove.push(observed.status.id.clone());
            start_or_wait(input, container, kind, None, actions);
            false
        }
        _ => {
            if has_stopped(observed) && observed.state() == cri::ContainerState::ContainerUnknown {
                kill(
                    input,
                    observed,
                    container,
                    kind,
                    KillReason::UnknownState,
                    true,
                    actions,
                );
            }
            start_or_wait(input, container, kind, Some(observed), actions);
            false
        }
    }
}
