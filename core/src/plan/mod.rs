//! The pod plan: upstream's computePodActions in sergeant's terms. From the pod, what the runtime
//! shows of it, the container back-offs and the probe verdicts, [`plan`] decides — and only
//! decides — what one sync must do: kill the whole pod, create a sandbox, kill containers, start
//! containers, and which containers wait and why. The pod actor executes the result; deciding and
//! acting never interleave, so every decision is a fact a table test can state.
//!
//! The rules, as upstream's kubelet applies them:
//! - a pod gets a new sandbox when it has none, when its newest one is not ready, when more than
//!   one is ready, or when a pod-network sandbox has no address ([`sandbox`]); a pod whose
//!   `restartPolicy: Never` containers already ran is not given another one, and neither is a pod
//!   with nothing left to start: it is killed instead;
//! - init containers run one at a time, in order; a sidecar (an init container with
//!   `restartPolicy: Always`) lets the next one start once it is running and past its startup
//!   probe; regular containers start when every init container is done ([`init`], [`regular`]);
//! - a running container whose definition changed is replaced whatever the restart policy; one
//!   that failed its liveness or startup probe is killed, and started again unless the pod's
//!   policy is `Never` — after its back-off, as a restart after an exit: a probe that keeps
//!   failing backs off as a crash loop does; an exited one is restarted as the policy says,
//!   after its back-off;
//! - when no regular container runs or will run, the pod is done and killed (its sidecars too);
//! - a container that exited with a code its `RestartAllContainers` rule matches resets the
//!   pod in place: every container is taken out of the runtime, and the pod starts again in
//!   the same sandbox from its first init container ([`reset`]);
//! - an ephemeral container starts once in the ready sandbox, in its target's process
//!   namespace when it names one, and never again whatever becomes of it ([`ephemeral`]).

mod ephemeral;
mod init;
mod regular;
mod reset;
mod sandbox;
mod step;
#[cfg(test)]
mod tests;
mod verdicts;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant, SystemTime};

use k8s_openapi::api::core::v1::Pod;

use crate::backoff::{Backoff, BackoffPolicy};
use crate::kind::ContainerKind;
use crate::restart::RestartGates;
use crate::runtime::PodRuntime;

/// Why a container is not running and not being started, as its status will say.
pub use crate::status::Waiting;
pub use sandbox::SandboxReason;
pub use step::backoff_key;

/// What the prober says about the pod's containers, by container ID; the pod actor keeps it
/// ([`ProbeVerdicts::take`], [`ProbeVerdicts::forget_gone`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProbeVerdicts {
    /// Containers whose liveness or startup probe failed: the container ID, which probe, and
    /// the probe's output.
    pub failed: BTreeMap<String, ProbeFailure>,
    /// Containers whose startup probe succeeded.
    pub started: BTreeSet<String>,
}

/// A failed liveness or startup probe: the container must be killed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeFailure {
    /// Which probe failed.
    pub probe: FailedProbe,
}

/// The probes whose failure kills a container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailedProbe {
    /// `livenessProbe`.
    Liveness,
    /// `startupProbe`.
    Startup,
}

/// Everything one plan is made from.
#[derive(Debug, Clone, Copy)]
pub struct PlanInput<'a> {
    /// The desired pod.
    pub pod: &'a Pod,
    /// What the runtime shows of it now.
    pub runtime: &'a PodRuntime,
    /// Container restart back-off as the pod actor keeps it.
    pub restarts: &'a Backoff,
    /// The crash-loop periods.
    pub policy: BackoffPolicy,
    /// The prober's verdicts.
    pub probes: &'a ProbeVerdicts,
    /// The monotonic now, for back-off.
    pub now: Instant,
    /// The wall-clock now, to tell how long ago the runtime says something happened.
    pub wall_clock: SystemTime,
    /// The feature gates that decide how restarts are read.
    pub gates: RestartGates,
}

/// Why a running container is to be killed; the message is upstream's event text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillReason {
    /// Its spec hash differs from the pod's spec: replaced whatever the restart policy.
    DefinitionChanged,
    /// Its liveness probe failed.
    Liveness,
    /// Its startup probe failed.
    Startup,
    /// The runtime does not know its state.
    UnknownState,
    /// Its resources changed and its `resizePolicy` restarts it for that (see
    /// [`crate::resize`]).
    Resize,
}

/// One container to kill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerKill {
    /// Its runtime ID.
    pub id: String,
    /// Its name in the spec.
    pub name: String,
    /// Why.
    pub reason: KillReason,
    /// What the Killing event says.
    pub message: String,
    /// How long it is given to stop (its preStop hook included).
    pub grace: Duration,
}

/// One container to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerStart {
    /// Its name in the spec.
    pub name: String,
    /// Init, sidecar or regular.
    pub kind: ContainerKind,
    /// The restart count of the new instance (one more than the newest one before it).
    pub restart_count: u32,
    /// When it restarts a container that exited: the back-off is to record this restart.
    pub after_exit: Option<Restart>,
    /// The runtime ID of the container whose process namespace it joins: an ephemeral
    /// container's `targetContainerName`, found in the sandbox it starts in.
    pub pid_target: Option<String>,
}

/// A restart of a container that exited, for its back-off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restart {
    /// The back-off entry ([`backoff_key`]).
    pub key: String,
    /// How long the exited instance ran.
    pub ran_for: Duration,
}

/// One container instance the reset of the pod takes out of the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerReset {
    /// Its runtime ID.
    pub id: String,
    /// Its name in the spec.
    pub name: String,
    /// It has not exited: it is killed (at once, with no grace period) before it is removed.
    pub kill: bool,
}

/// A sandbox to create.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SandboxCreate {
    /// Its attempt number: one more than the newest sandbox before it.
    pub attempt: u32,
    /// Why the pod needs it.
    pub reason: SandboxReason,
}

/// What one sync must do, in order: kill the pod (and nothing else), or reset it (and nothing
/// else), or create the sandbox, remove the leftovers, kill the containers, then start the
/// containers in the order given.
#[derive(Debug, Clone, Default)]
pub struct PodActions {
    /// Stop every container and the sandbox: the pod is done, or cannot be run again.
    pub kill_pod: bool,
    /// A new sandbox first (old ones are stopped before it is made).
    pub create_sandbox: Option<SandboxCreate>,
    /// The ready sandbox the containers go into, when none is created.
    pub sandbox_id: Option<String>,
    /// Containers created but never started (a start that failed half-way): removed before
    /// their name is started again.
    pub remove: Vec<String>,
    /// Running containers to kill.
    pub kill: Vec<ContainerKill>,
    /// Containers to start, in order.
    pub start: Vec<ContainerStart>,
    /// A container exited with a code its `RestartAllContainers` rule matches: every instance
    /// of every container, killed if need be and removed, in this order.
    pub reset: Vec<ContainerReset>,
    /// Containers waiting for their back-off, with the reason their status gives.
    pub waiting: BTreeMap<String, Waiting>,
    /// The back-off after this plan looked at the runtime (resumed from restart counts for
    /// containers the actor had no record of); its next expiry is when the next sync is due.
    pub restarts: Backoff,
}

impl PodActions {
    /// Whether executing this plan changes nothing in the runtime.
    #[must_use]
    pub fn is_idle(&self) -> bool {
        !self.kill_pod
            && self.create_sandbox.is_none()
            && self.remove.is_empty()
            && self.kill.is_empty()
            && self.start.is_empty()
            && self.reset.is_empty()
    }
}

/// Decides what one sync of `input.pod` must do.
#[must_use]
pub fn plan(input: &PlanInput<'_>) -> PodActions {
    let mut actions = PodActions {
        restarts: input.restarts.clone(),
        ..PodActions::default()
    };
    match sandbox::decide(input) {
        sandbox::Decision::Ready(id) => {
            actions.sandbox_id = Some(id.clone());
            if reset::plan(input, &id, &mut actions) {
                return actions;
            }
            if init::plan(input, &id, &mut actions) == init::Phase::Done {
                regular::plan(input, &id, &mut actions);
            }
            if !actions.kill_pod {
                ephemeral::plan(input, &id, &mut actions);
            }
        }
        sandbox::Decision::Create(create) => sandbox::plan_fresh(input, create, &mut actions),
    }
    actions
}
