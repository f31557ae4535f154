//! The sandbox half of the plan: whether the pod's newest sandbox can be used, and what a pod
//! that needs a new one starts in it (or why it must not get one).

use k8s_cri::v1 as cri;
use k8s_openapi::api::core::v1::Container;

use super::step::start_or_wait;
use super::{PlanInput, PodActions, SandboxCreate};
use crate::kind::{init_containers, regular_containers, ContainerKind};
use crate::restart::{may_restart, pod_policy, restarts_after_exit};

/// Why a pod needs a new sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxReason {
    /// It has none.
    NoSandbox,
    /// Its newest sandbox is not ready (it died, or was stopped).
    NotReady,
    /// More than one of its sandboxes is ready: they are all replaced by one.
    SeveralReady,
    /// Its pod-network sandbox has no IP address.
    NoAddress,
}

impl SandboxReason {
    /// What a log line or an event says.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Self::NoSandbox => "the pod has no sandbox",
            Self::NotReady => "the pod's sandbox is not ready",
            Self::SeveralReady => "more than one sandbox of the pod is ready",
            Self::NoAddress => "the pod's sandbox has no IP address",
        }
    }
}

/// What the sandbox check found.
pub(super) enum Decision {
    /// The newest sandbox is ready and usable.
    Ready(String),
    /// A new sandbox is needed.
    Create(SandboxCreate),
}

/// Checks the pod's sandboxes (newest first in the runtime view).
pub(super) fn decide(input: &PlanInput<'_>) -> Decision {
    let runtime = input.runtime;
    let Some(newest) = runtime.sandboxes.first() else {
        return create(0, SandboxReason::NoSandbox);
    };
    let attempt = newest
        .metadata
        .as_ref()
        .map_or(0, |m| m.attempt.saturating_add(1));
    let ready = |s: &&cri::PodSandbox| s.state == cri::PodSandboxState::SandboxReady as i32;
    if !ready(&newest) {
        return create(attempt, SandboxReason::NotReady);
    }
    if runtime.sandboxes.iter().filter(ready).count() > 1 {
        return create(attempt, SandboxReason::SeveralReady);
    }
    let host_network = input
        .pod
        .spec
        .as_ref()
        .and_then(|s| s.host_network)
        .unwrap_or(false);
    let status_says_no_address = runtime
        .sandbox_status
        .as_ref()
        .is_some_and(|s| s.id == newest.id)
        && runtime.pod_ip().is_none();
    if !host_network && status_says_no_address {
        return create(attempt, SandboxReason::NoAddress);
    }
    Decision::Ready(newest.id.clone())
}

fn create(attempt: u32, reason: SandboxReason) -> Decision {
    Decision::Create(SandboxCreate { attempt, reason })
}

/// The plan of a pod that needs a new sandbox: the first init container, or every regular
/// container that its restart rules and policy still run, in a new sandbox — or, when the
/// containers already ran and none may run again (a `Never` pod's), or nothing is left to
/// start, no sandbox and the pod killed.
pub(super) fn plan_fresh(input: &PlanInput<'_>, create: SandboxCreate, actions: &mut PodActions) {
    let policy = pod_policy(input.pod.spec.as_ref(), input.gates);
    let ran_before = create.attempt > 0 && !input.runtime.containers.is_empty();
    if ran_before && !regular_containers(input.pod).any(|c| may_restart(policy, c)) {
        actions.kill_pod = true;
        return;
    }
    // A new sandbox runs the init containers again from the first.
    let first: Vec<(&Container, ContainerKind)> = match init_containers(input.pod).next() {
        Some((container, kind)) => vec![(container, kind)],
        None => regular_containers(input.pod)
            .filter(|c| {
                let exited_before = input.runtime.latest_anywhere(&c.name).filter(|o| exited(o));
                exited_before.is_none_or(|old| restarts_after_exit(policy, c, old.status.exit_code))
            })
            .map(|c| (c, ContainerKind::Regular))
            .collect(),
    };
    if first.is_empty() {
        actions.kill_pod = true;
        return;
    }
    actions.create_sandbox = Some(create);
    for (container, kind) in first {
        let previous = input.runtime.latest_anywhere(&container.name);
        start_or_wait(input, container, kind, previous, actions);
    }
}

fn exited(container: &crate::runtime::ObservedContainer) -> bool {
    container.state() == cri::ContainerState::ContainerExited
}
