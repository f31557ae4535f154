//! The ephemeral half of the plan, in a ready sandbox: each ephemeral container the runtime
//! has no instance of is started — while the init containers still run too, as upstream's —
//! and one that has an instance is left alone whatever its state: an ephemeral container never
//! runs twice, whatever the pod's restart policy. Only a start that failed half-way (an
//! instance created, never started) is removed and made again, as for the other kinds.
//!
//! An ephemeral container that names a `targetContainerName` joins that container's process
//! namespace, so its instance in the sandbox must exist first; until it does, the ephemeral
//! container waits, with upstream's reason and message.

use k8s_cri::v1 as cri;

use super::{ContainerStart, PlanInput, PodActions, Waiting};
use crate::kind::{ephemeral_containers, ContainerKind};

/// The waiting reason of a container whose configuration cannot be made yet.
const CONFIG_ERROR: &str = "CreateContainerConfigError";

/// Plans the ephemeral containers of the pod in the ready sandbox `sandbox_id`.
pub(super) fn plan(input: &PlanInput<'_>, sandbox_id: &str, actions: &mut PodActions) {
    for ephemeral in ephemeral_containers(input.pod) {
        let name = &ephemeral.name;
        if let Some(observed) = input.runtime.latest_anywhere(name) {
            let half_made = observed.sandbox_id == sandbox_id
                && observed.state() == cri::ContainerState::ContainerCreated;
            if !half_made {
                continue;
            }
            actions.remove.push(observed.status.id.clone());
        }
        let target = ephemeral
            .target_container_name
            .as_deref()
            .filter(|t| !t.is_empty());
        let pid_target = match target {
            None => None,
            Some(target) => match input.runtime.latest(sandbox_id, target) {
                Some(instance) => Some(instance.status.id.clone()),
                None => {
                    let message = format!("unable to find target container {target}");
                    let reason = CONFIG_ERROR.to_owned();
                    actions
                        .waiting
                        .insert(name.clone(), Waiting { reason, message });
                    continue;
                }
            },
        };
        actions.start.push(ContainerStart {
            name: name.clone(),
            kind: ContainerKind::Ephemeral,
            restart_count: 0,
            after_exit: None,
            pid_target,
        });
    }
}
