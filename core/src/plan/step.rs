//! The steps every part of the plan takes alike: reading the restart policy, starting a
//! container or making it wait out its back-off, and killing one with upstream's message.

use std::time::Duration;

use k8s_cri::v1 as cri;
use k8s_openapi::api::core::v1::{Container, Pod};

use super::{ContainerKill, ContainerStart, KillReason, PlanInput, PodActions, Restart, Waiting};
use crate::hash::container_hash;
use crate::kind::ContainerKind;
use crate::runtime::ObservedContainer;
use crate::time::go_duration;

/// The pod's `restartPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RestartPolicy {
    /// Restart every container that exits (the default).
    Always,
    /// Restart containers that fail.
    OnFailure,
    /// Restart nothing.
    Never,
}

/// The pod's restart policy; `Always` when it names none (or one the API would not accept).
pub(super) fn restart_policy(pod: &Pod) -> RestartPolicy {
    match pod.spec.as_ref().and_then(|s| s.restart_policy.as_deref()) {
        Some("Never") => RestartPolicy::Never,
        Some("OnFailure") => RestartPolicy::OnFailure,
        _ => RestartPolicy::Always,
    }
}

/// Whether a regular container that exited with `exit_code` runs again under `policy`.
pub(super) fn restarts_after(policy: RestartPolicy, exit_code: i32) -> bool {
    match policy {
        RestartPolicy::Always => true,
        RestartPolicy::OnFailure => exit_code != 0,
        RestartPolicy::Never => false,
    }
}

/// The back-off key of a container: its name and spec hash, so a changed spec (a new image)
/// starts with no back-off, as upstream's.
#[must_use]
pub fn backoff_key(container: &Container) -> String {
    format!("{}@{}", container.name, container_hash(container))
}

/// Whether the running `observed` instance was created from another spec than `spec`. An
/// instance without a recorded hash was not made by sergeant's sync and is left alone.
pub(super) fn definition_changed(observed: &ObservedContainer, spec: &Container) -> bool {
    observed
        .spec_hash()
        .is_some_and(|hash| hash != container_hash(spec))
}

/// Whether the runtime says the instance has stopped (exited, or in no state it can name).
pub(super) fn has_stopped(observed: &ObservedContainer) -> bool {
    matches!(
        observed.state(),
        cri::ContainerState::ContainerExited | cri::ContainerState::ContainerUnknown
    )
}

/// Starts `container` now — or, when its newest instance `previous` exited and its back-off has
/// not run out, records why it waits.
pub(super) fn start_or_wait(
    input: &PlanInput<'_>,
    container: &Container,
    kind: ContainerKind,
    previous: Option<&ObservedContainer>,
    actions: &mut PodActions,
) {
    let name = &container.name;
    let restart_count = input
        .runtime
        .latest_anywhere(name)
        .map_or(0, |c| c.restart_count().saturating_add(1));
    let exited = previous.filter(|p| has_stopped(p));
    let after_exit = exited.map(|exited| {
        let key = backoff_key(container);
        if !definition_changed(exited, container) {
            actions.restarts.resume(
                &key,
                exited.restart_count(),
                age(input, exited.status.started_at),
                input.now,
                input.policy,
            );
        }
        Restart {
            key,
            ran_for: ran_for(exited),
        }
    });
    if let Some(restart) = &after_exit {
        if let Err(remaining) = actions.restarts.check(&restart.key, input.now) {
            let delay = actions.restarts.delay(&restart.key).unwrap_or(remaining);
            actions.waiting.insert(
                name.clone(),
                Waiting {
                    reason: "CrashLoopBackOff".into(),
                    message: format!(
                        "back-off {} restarting failed container={name} pod={}",
                        go_duration(delay),
                        pod_name(input.pod)
                    ),
                },
            );
            return;
        }
    }
    actions.start.push(ContainerStart {
        name: name.clone(),
        kind,
        restart_count,
        after_exit,
    });
}

/// Kills the running `observed` instance of `container` for `reason`; `restart` says whether
/// it is started again (the message says so, as upstream's Killing event does).
pub(super) fn kill(
    observed: &ObservedContainer,
    container: &Container,
    kind: ContainerKind,
    reason: KillReason,
    restart: bool,
    actions: &mut PodActions,
) {
    let name = &container.name;
    let mut message = match (reason, kind) {
        (KillReason::DefinitionChanged, ContainerKind::Regular) => {
            format!("Container {name} definition changed")
        }
        (KillReason::DefinitionChanged, _) => format!("Init container {name} definition changed"),
        (KillReason::Liveness, _) => format!("Container {name} failed liveness probe"),
        (KillReason::Startup, _) => format!("Container {name} failed startup probe"),
        (KillReason::UnknownState, _) => {
            "Container is in unknown state, try killing it before restart".to_owned()
        }
    };
    if restart && reason != KillReason::UnknownState {
        message.push_str(", will be restarted");
    }
    actions.kill.push(ContainerKill {
        id: observed.status.id.clone(),
        name: name.clone(),
        reason,
        message,
    });
}

/// How long the instance ran before it exited (zero when the runtime's times make no sense).
fn ran_for(exited: &ObservedContainer) -> Duration {
    let nanos = exited
        .status
        .finished_at
        .checked_sub(exited.status.started_at)
        .and_then(|n| u64::try_from(n).ok())
        .unwrap_or(0);
    Duration::from_nanos(nanos)
}

/// How long ago the runtime timestamp `nanos` (since the epoch) was.
fn age(input: &PlanInput<'_>, nanos: i64) -> Duration {
    let then = std::time::UNIX_EPOCH + Duration::from_nanos(u64::try_from(nanos).unwrap_or(0));
    input.wall_clock.duration_since(then).unwrap_or_default()
}

/// `name_namespace(uid)`, as upstream's back-off message names the pod.
fn pod_name(pod: &Pod) -> String {
    format!(
        "{}_{}({})",
        pod.metadata.name.as_deref().unwrap_or_default(),
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.uid.as_deref().unwrap_or_default()
    )
}
