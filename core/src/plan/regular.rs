//! The regular half of the plan, once the init containers are done: every container of
//! `spec.containers` started, kept, replaced, killed or restarted, and the pod killed when none
//! of them runs or will run again.

use k8s_cri::v1 as cri;

use super::step::{definition_changed, kill, start_or_wait};
use super::{FailedProbe, KillReason, PlanInput, PodActions};
use crate::kind::{regular_containers, ContainerKind};
use crate::resize::needs_restart;
use crate::restart::{container_policy, pod_policy, restarts_after_exit, RestartPolicy};

/// Plans the regular containers of the pod in the ready sandbox `sandbox_id`.
pub(super) fn plan(input: &PlanInput<'_>, sandbox_id: &str, actions: &mut PodActions) {
    let policy = pod_policy(input.pod.spec.as_ref(), input.gates);
    let kind = ContainerKind::Regular;
    let mut kept = 0_usize;
    for container in regular_containers(input.pod) {
        let name = container.name.as_str();
        let Some(observed) = input.runtime.latest(sandbox_id, name) else {
            // Not in this sandbox yet; an instance in an older sandbox still counts for the
            // restart policy and the back-off.
            let older = input.runtime.latest_anywhere(name);
            let done = older.is_some_and(|o| {
                o.state() == cri::ContainerState::ContainerExited
                    && !restarts_after_exit(policy, container, o.status.exit_code)
            });
            if !done {
                start_or_wait(input, container, kind, older, actions);
            }
            continue;
        };
        match observed.state() {
            cri::ContainerState::ContainerRunning => {
                let failed = input.probes.failed.get(&observed.status.id);
                let replaced = if definition_changed(observed, container) {
                    Some(KillReason::DefinitionChanged)
                } else {
                    needs_restart(input.pod, observed, container).then_some(KillReason::Resize)
                };
                if let Some(reason) = replaced {
                    kill(input, observed, container, kind, reason, true, actions);
                    start_or_wait(input, container, kind, None, actions);
                } else if let Some(failure) = failed {
                    let reason = match failure.probe {
                        FailedProbe::Liveness => KillReason::Liveness,
                        FailedProbe::Startup => KillReason::Startup,
                    };
                    let restart = container_policy(policy, container) != RestartPolicy::Never;
                    kill(input, observed, container, kind, reason, restart, actions);
                    if restart {
                        start_or_wait(input, container, kind, Some(observed), actions);
                    }
                } else {
                    kept += 1;
                }
            }
            cri::ContainerState::ContainerCreated => {
                actions.remove.push(observed.status.id.clone());
                start_or_wait(input, container, kind, None, actions);
            }
            cri::ContainerState::ContainerUnknown => {
                let restart = restarts_after_exit(policy, container, observed.status.exit_code);
                kill(
                    input,
                    observed,
                    container,
                    kind,
                    KillReason::UnknownState,
                    restart,
                    actions,
                );
                if restart {
                    start_or_wait(input, container, kind, Some(observed), actions);
                }
            }
            cri::ContainerState::ContainerExited => {
                if restarts_after_exit(policy, container, observed.status.exit_code) {
                    start_or_wait(input, container, kind, Some(observed), actions);
                }
            }
        }
    }
    let starting = actions.start.iter().any(|s| s.kind == kind);
    let waiting = regular_containers(input.pod).any(|c| actions.waiting.contains_key(&c.name));
    if kept == 0 && !starting && !waiting {
        // Nothing regular runs or will run: the pod is done; its sidecars go with it.
        actions.kill_pod = true;
        actions.start.clear();
        actions.kill.clear();
        actions.remove.clear();
    }
}
