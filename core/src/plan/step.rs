//! The steps every part of the plan takes alike: starting a container or making it wait out its
//! back-off, and killing one with upstream's message.

use std::time::{Duration, Instant};

use k8s_cri::v1 as cri;
use k8s_openapi::api::core::v1::{Container, Pod};

use super::{ContainerKill, ContainerStart, KillReason, PlanInput, PodActions, Restart, Waiting};
use crate::hash::container_hash;
use crate::kind::ContainerKind;
use crate::runtime::ObservedContainer;
use crate::time::go_duration;

/// The grace period of a pod that names none, as the API's default.
const DEFAULT_GRACE_SECONDS: i64 = 30;

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

/// Starts `container` now — or, when the instance `previous` ended (it exited, or is being
/// killed for a failed liveness or startup probe) and the back-off has not run out, records
/// why it waits. A restart after a probe kill counts for the back-off as one after a crash, so
/// a probe that keeps failing backs off as upstream's does.
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
    let exited =
        previous.filter(|p| has_stopped(p) || input.probes.failed.contains_key(&p.status.id));
    if previous.is_none() {
        // A first instance, or one replacing another spec's: its back-off starts over.
        actions.restarts.fresh(&backoff_key(container));
    }
    let after_exit = exited.map(|exited| {
        let key = backoff_key(container);
        if !definition_changed(exited, container) {
            actions
                .restarts
                .resume(&key, exited.restart_count(), input.policy);
        }
        Restart {
            key,
            ran_for: ran_for(input, exited),
        }
    });
    if let (Some(restart), Some(exited)) = (&after_exit, exited) {
        let exited_at = exited_at(input, exited);
        if let Err(remaining) = actions
            .restarts
            .wait_after_exit(&restart.key, exited_at, input.now)
        {
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
        pid_target: None,
    });
}

/// Kills the running `observed` instance of `container` for `reason`; `restart` says whether
/// it is started again (the message of a regular container says so, as upstream's Killing
/// event does; an init container's never does).
pub(super) fn kill(
    input: &PlanInput<'_>,
    observed: &ObservedContainer,
    container: &Container,
    kind: ContainerKind,
    reason: KillReason,
    restart: bool,
    actions: &mut PodActions,
) {
    let name = &container.name;
    let kind_word = match kind {
        ContainerKind::Regular | ContainerKind::Ephemeral => "Container",
        ContainerKind::Init | ContainerKind::Sidecar => "Init container",
    };
    let what = format!("{kind_word} {name}");
    let mut message = match reason {
        KillReason::DefinitionChanged => format!("{what} definition changed"),
        KillReason::Resize => format!("Container {name} resize requires restart"),
        KillReason::Liveness => format!("{what} failed liveness probe"),
        KillReason::Startup => format!("{what} failed startup probe"),
        KillReason::UnknownState => {
            format!("{kind_word} is in \"unknown\" state, try killing it before restart")
        }
    };
    if restart
        && kind == ContainerKind::Regular
        && !matches!(reason, KillReason::UnknownState | KillReason::Resize)
    {
        message.push_str(", will be restarted");
    }
    actions.kill.push(ContainerKill {
        id: observed.status.id.clone(),
        name: name.clone(),
        reason,
        message,
        grace: kill_grace(input.pod, container, reason),
    });
}

/// The grace period of a container kill, as upstream: the failed probe's own
/// `terminationGracePeriodSeconds`, else the pod's, else 30 s.
fn kill_grace(pod: &Pod, container: &Container, reason: KillReason) -> Duration {
    let probe = match reason {
        KillReason::Liveness => container.liveness_probe.as_ref(),
        KillReason::Startup => container.startup_probe.as_ref(),
        KillReason::DefinitionChanged | KillReason::UnknownState | KillReason::Resize => None,
    };
    let seconds = probe
        .and_then(|p| p.termination_grace_period_seconds)
        .or_else(|| {
            pod.spec
                .as_ref()
                .and_then(|s| s.termination_grace_period_seconds)
        })
        .unwrap_or(DEFAULT_GRACE_SECONDS);
    Duration::from_secs(u64::try_from(seconds).unwrap_or(0))
}

/// How long the instance ran: until it exited, or until now for one being killed (zero when
/// the runtime's times make no sense).
fn ran_for(input: &PlanInput<'_>, ended: &ObservedContainer) -> Duration {
    let status = &ended.status;
    if status.finished_at == 0 {
        return age(input, status.started_at);
    }
    let nanos = status
        .finished_at
        .checked_sub(status.started_at)
        .and_then(|n| u64::try_from(n).ok())
        .unwrap_or(0);
    Duration::from_nanos(nanos)
}

/// When the instance ended, on the monotonic clock: its `finishedAt`, or now for one being
/// killed (it ends with this sync).
fn exited_at(input: &PlanInput<'_>, ended: &ObservedContainer) -> Instant {
    if ended.status.finished_at == 0 {
        return input.now;
    }
    let ago = age(input, ended.status.finished_at);
    input.now.checked_sub(ago).unwrap_or(input.now)
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
