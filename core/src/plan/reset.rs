//! The reset of a pod in place, upstream's `RestartAllContainers` action (KEP-5532): once a
//! container of the pod's ready sandbox has exited with a code its first matching restart rule
//! answers with `RestartAllContainers`, the sync does nothing but take every container of the
//! pod out of the runtime — the running ones killed at once, with no grace period and so no
//! preStop hook — keeping the sandbox (and its IP). The regular containers go first, then the
//! init containers (sidecars among them), then the containers whose exit set the reset off:
//! should the reset stop part-way, the next sync still sees why it began. With no container
//! left, the next plan starts the pod afresh in the same sandbox: the init containers run
//! again, in order, then the regular ones.

use k8s_cri::v1 as cri;
use k8s_openapi::api::core::v1::Container;

use super::{ContainerReset, PlanInput, PodActions};
use crate::kind::{init_containers, regular_containers};
use crate::restart::{pod_policy, restarts_all, PodRestart};
use crate::runtime::ObservedContainer;

/// Plans the reset when a container of the sandbox `sandbox_id` has set one off; true when it
/// did (the plan is then the reset and nothing else).
pub(super) fn plan(input: &PlanInput<'_>, sandbox_id: &str, actions: &mut PodActions) -> bool {
    let init: Vec<&Container> = init_containers(input.pod).map(|(c, _)| c).collect();
    let regular: Vec<&Container> = regular_containers(input.pod).collect();
    let pod = pod_policy(input.pod.spec.as_ref(), input.gates);
    let triggered = init.iter().chain(&regular).any(|container| {
        let latest = input.runtime.latest(sandbox_id, &container.name);
        latest.is_some_and(|observed| set_off(pod, container, observed))
    });
    if !triggered {
        return false;
    }
    let (init_sources, init_targets) = split(input, pod, &init);
    let (regular_sources, regular_targets) = split(input, pod, &regular);
    actions.reset = [regular_targets, init_targets, regular_sources, init_sources].concat();
    true
}

/// Whether `observed`, an instance of `container`, exited with a code that resets the pod.
fn set_off(pod: PodRestart, container: &Container, observed: &ObservedContainer) -> bool {
    observed.state() == cri::ContainerState::ContainerExited
        && restarts_all(pod, container, observed.status.exit_code)
}

/// Every instance the runtime has of `containers` (in any sandbox), in spec order, as the
/// instances that set the reset off and the others.
fn split(
    input: &PlanInput<'_>,
    pod: PodRestart,
    containers: &[&Container],
) -> (Vec<ContainerReset>, Vec<ContainerReset>) {
    let mut sources = Vec::new();
    let mut targets = Vec::new();
    for container in containers {
        let instances = input.runtime.containers.iter();
        for observed in instances.filter(|o| o.name() == container.name) {
            let reset = ContainerReset {
                id: observed.status.id.clone(),
                name: container.name.clone(),
                kill: observed.state() != cri::ContainerState::ContainerExited,
            };
            if set_off(pod, container, observed) {
                sources.push(reset);
            } else {
                targets.push(reset);
            }
        }
    }
    (sources, targets)
}
