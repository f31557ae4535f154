//! One container's status: state, last state, restart count, readiness and identity.

use k8s_cri::v1 as cri;
use k8s_openapi::api::core::v1::{
    Container, ContainerState, ContainerStateRunning, ContainerStateTerminated,
    ContainerStateWaiting, ContainerStatus,
};

use super::reset;
use super::resources;
use super::runtime::{self, Attempts};
use super::{time, Knowledge};

/// Waiting reason of a container that is being created.
pub(super) const CONTAINER_CREATING: &str = "ContainerCreating";
/// Waiting reason of a container whose turn has not come because init containers still run.
pub(super) const POD_INITIALIZING: &str = "PodInitializing";
/// Reason of a container whose state cannot be known.
const STATUS_UNKNOWN: &str = "ContainerStatusUnknown";
/// Exit code reported for a container that did not run to an exit of its own (as if killed).
const UNKNOWN_EXIT_CODE: i32 = 137;

/// What part a container plays in its pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// An init container that runs to completion before the next one starts.
    Init,
    /// An init container with `restartPolicy: Always`: it keeps running beside the pod.
    Sidecar,
    /// A container of `spec.containers`.
    Regular,
    /// A container of `spec.ephemeralContainers`: never ready and never probed, so its status
    /// says nothing of either (upstream's prober leaves `started` unset for it).
    Ephemeral,
}

impl Kind {
    /// The kind of a container of `spec.initContainers`.
    pub fn of_init(container: &Container) -> Self {
        if container.restart_policy.as_deref() == Some("Always") {
            Self::Sidecar
        } else {
            Self::Init
        }
    }
}

/// Builds container statuses from a pod's runtime attempts and the actor's knowledge.
pub(super) struct Builder<'a> {
    /// What the pod actor knows.
    pub knowledge: &'a Knowledge,
    /// The scheme of container IDs (`containerd`).
    pub runtime_name: &'a str,
    /// The container statuses of the pod's previous status.
    pub previous: Vec<&'a ContainerStatus>,
    /// The pod is being deleted and nothing runs any more: nothing will start again.
    pub terminal: bool,
    /// The pod is being reset in place (`RestartAllContainers`): a container the runtime no
    /// longer has was taken out to start afresh.
    pub restarting: bool,
}

/// What is known of a container's past.
struct History {
    latest: ContainerState,
    previous: ContainerState,
    restart_count: i32,
    container_id: Option<String>,
    image_id: String,
}

impl Builder<'_> {
    /// The status of `spec`, from its runtime `attempts` if any; a container that has none
    /// waits with the actor's reason, else `default_reason`.
    pub fn build(
        &self,
        spec: &Container,
        kind: Kind,
        attempts: Option<&Attempts<'_>>,
        default_reason: &str,
    ) -> ContainerStatus {
        let name = spec.name.as_str();
        let waiting = if self.knowledge.terminating {
            None
        } else {
            self.knowledge.waiting.get(name)
        };
        let previous = self.previous.iter().find(|c| c.name == name).copied();
        let removed = previous
            .filter(|_| attempts.is_none())
            .and_then(|p| reset::removed(p, self.restarting));
        let history = match attempts {
            Some(attempts) => Some(self.runtime_history(name, attempts)),
            None if removed.is_some() => None,
            None => self.remembered_history(name),
        };
        let (mut state, last_state, restart_count, container_id, image_id) = match history {
            None if removed.is_some() => {
                let (state, last, count) = removed.unwrap_or_default();
                let state = match (state.waiting.is_some(), waiting) {
                    (true, _) => state,
                    (false, Some(w)) => waiting_state(&w.reason, &w.message),
                    (false, None) => waiting_state(default_reason, ""),
                };
                let image_id = previous.map(|p| p.image_id.clone()).unwrap_or_default();
                (state, last, count, None, image_id)
            }
            None => {
                let state = match waiting {
                    Some(w) => waiting_state(&w.reason, &w.message),
                    None => waiting_state(default_reason, ""),
                };
                (state, ContainerState::default(), 0, None, String::new())
            }
            Some(h) => {
                let (state, last_state) = match waiting {
                    Some(w) if h.latest.running.is_none() => {
                        let last = if h.latest.terminated.is_some() {
                            h.latest
                        } else {
                            h.previous
                        };
                        (waiting_state(&w.reason, &w.message), last)
                    }
                    _ => (h.latest, h.previous),
                };
                (
                    state,
                    last_state,
                    h.restart_count,
                    h.container_id,
                    h.image_id,
                )
            }
        };
        if self.terminal && state.terminated.is_none() {
            state = never_finished();
        }

        let running = state.running.is_some();
        let passed = |results: &std::collections::BTreeMap<String, bool>, probed: bool| {
            results.get(name).copied().unwrap_or(!probed)
        };
        let started = running && passed(&self.knowledge.started, spec.startup_probe.is_some());
        let ready = match kind {
            Kind::Init => state.terminated.as_ref().is_some_and(|t| t.exit_code == 0),
            Kind::Sidecar | Kind::Regular => {
                started && passed(&self.knowledge.ready, spec.readiness_probe.is_some())
            }
            Kind::Ephemeral => false,
        };
        let resources = attempts.map(|a| {
            let id = self.container_id(a.latest);
            resources::container_applied(spec, a.latest, &id, previous)
        });
        let mut status = ContainerStatus {
            name: name.to_owned(),
            image: spec.image.clone().unwrap_or_default(),
            allocated_resources: resources::container_allocated(spec),
            resources,
            image_id,
            container_id,
            state: Some(state),
            last_state: Some(last_state),
            restart_count,
            ready,
            started: (kind != Kind::Ephemeral).then_some(started),
            ..ContainerStatus::default()
        };
        if let Some(previous) = previous.filter(|_| attempts.is_some()) {
            reset::keep(previous, &mut status);
        }
        status
    }

    /// The container's past as the runtime shows it. The termination message belongs to the
    /// newest attempt that terminated.
    fn runtime_history(&self, name: &str, attempts: &Attempts<'_>) -> History {
        let message = self.knowledge.termination_messages.get(name);
        let latest_exited = runtime::state(attempts.latest) == cri::ContainerState::ContainerExited;
        let latest = self.describe(attempts.latest, message.filter(|_| latest_exited));
        let previous = attempts.previous.map_or_else(ContainerState::default, |p| {
            self.describe(p, message.filter(|_| !latest_exited))
        });
        History {
            latest,
            previous,
            restart_count: runtime::restart_count(attempts.latest),
            container_id: Some(self.container_id(attempts.latest)),
            image_id: attempts.latest.image_ref.clone(),
        }
    }

    /// The container's past as the previous status recorded it, when the runtime no longer has
    /// the container (removed by garbage collection, or a new runtime): only a terminated state
    /// is worth keeping, as nothing else can still be true.
    fn remembered_history(&self, name: &str) -> Option<History> {
        let previous = self.previous.iter().find(|c| c.name == name)?;
        let state = previous.state.as_ref();
        let last = previous.last_state.as_ref();
        let (latest, before) = match (state, last) {
            (Some(s), _) if s.terminated.is_some() => (s, last.cloned().unwrap_or_default()),
            (_, Some(l)) if l.terminated.is_some() => (l, ContainerState::default()),
            _ => return None,
        };
        Some(History {
            latest: ContainerState {
                terminated: latest.terminated.clone(),
                ..ContainerState::default()
            },
            previous: before,
            restart_count: previous.restart_count,
            container_id: previous.container_id.clone(),
            image_id: previous.image_id.clone(),
        })
    }

    /// One runtime attempt as an API container state.
    fn describe(
        &self,
        container: &cri::ContainerStatus,
        termination_message: Option<&String>,
    ) -> ContainerState {
        match runtime::state(container) {
            cri::ContainerState::ContainerRunning => ContainerState {
                running: Some(ContainerStateRunning {
                    started_at: time::from_cri(container.started_at),
                }),
                ..ContainerState::default()
            },
            cri::ContainerState::ContainerExited => ContainerState {
                terminated: Some(ContainerStateTerminated {
                    exit_code: container.exit_code,
                    reason: Some(exit_reason(container)),
                    message: exit_message(&container.message, termination_message),
                    started_at: time::from_cri(container.started_at),
                    finished_at: time::from_cri(container.finished_at),
                    container_id: Some(self.container_id(container)),
                    signal: None,
                }),
                ..ContainerState::default()
            },
            cri::ContainerState::ContainerCreated => waiting_state(CONTAINER_CREATING, ""),
            cri::ContainerState::ContainerUnknown => waiting_state(
                STATUS_UNKNOWN,
                "the runtime cannot tell this container's state",
            ),
        }
    }

    /// The API's container ID: `<runtime>://<id>`.
    fn container_id(&self, container: &cri::ContainerStatus) -> String {
        format!("{}://{}", self.runtime_name, container.id)
    }
}

/// The runtime's reason for an exit, or `Completed`/`Error` by exit code when it gave none.
fn exit_reason(container: &cri::ContainerStatus) -> String {
    match (container.reason.as_str(), container.exit_code) {
        ("", 0) => "Completed".to_owned(),
        ("", _) => "Error".to_owned(),
        (reason, _) => reason.to_owned(),
    }
}

/// The runtime's message and the container's own termination message, joined by `: `.
fn exit_message(runtime: &str, termination: Option<&String>) -> Option<String> {
    let parts: Vec<&str> = [runtime, termination.map_or("", String::as_str)]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join(": "))
}

/// A waiting state; an empty message is left out.
fn waiting_state(reason: &str, message: &str) -> ContainerState {
    ContainerState {
        waiting: Some(ContainerStateWaiting {
            reason: Some(reason.to_owned()),
            message: (!message.is_empty()).then(|| message.to_owned()),
        }),
        ..ContainerState::default()
    }
}

/// The final state of a container of a terminated pod that had no exit of its own to report.
fn never_finished() -> ContainerState {
    ContainerState {
        terminated: Some(ContainerStateTerminated {
            exit_code: UNKNOWN_EXIT_CODE,
            reason: Some(STATUS_UNKNOWN.to_owned()),
            message: Some("the pod was terminated before this container finished".to_owned()),
            ..ContainerStateTerminated::default()
        }),
        ..ContainerState::default()
    }
}

#[cfg(test)]
#[path = "container_tests.rs"]
mod tests;
