//! Computing a pod's status from its spec, what the runtime shows and what the pod actor knows.
//!
//! The pod actor calls [`compute`] after every sync and hands the result to the status manager.
//! It is a pure function (the clock comes in through [`Knowledge::now`]), so the whole of the
//! kubelet's status semantics is tested here without a runtime: container states and restart
//! history ([`container`]; ephemeral containers' too, which count for neither the phase nor
//! readiness), the pod phase ([`phase`]), the conditions ([`conditions`]) and the
//! addresses ([`network`]); and what the status manager writes over the API server's copy
//! ([`merge`]), one pod's write queue at a time ([`write_queue`]), a few pods at once
//! ([`write_slots`]). The QoS class comes from [`crate::spec::qos_class`].

mod conditions;
mod container;
pub mod merge;
mod network;
mod phase;
mod reset;
mod resources;
mod runtime;
mod time;
pub mod write_queue;
pub mod write_slots;

pub use self::network::{container_pod_ips, sandbox_ips};
pub use self::time::at as api_time;

#[cfg(test)]
mod testing;

use std::collections::BTreeMap;

use k8s_cri::v1 as cri;
use k8s_openapi::api::core::v1::{
    Container, ContainerStatus, Pod, PodCondition, PodSpec, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use self::container::{Builder, Kind};
use crate::allocation::PendingResize;
use crate::kind::{ephemeral_as_container, ephemeral_containers};
use crate::restart::RestartGates;
use crate::spec::PodCgroupResources;

/// The container runtime name used in container IDs when [`Observed::runtime_name`] is empty.
pub const DEFAULT_RUNTIME_NAME: &str = "containerd";

/// What the runtime shows for one pod: the raw material of its status.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// The pod's newest sandbox, if the runtime has one.
    pub sandbox: Option<cri::PodSandboxStatus>,
    /// Every container of the pod the runtime knows: all attempts of every container, with the
    /// labels and annotations sergeant put on them (see [`crate::labels`]).
    pub containers: Vec<cri::ContainerStatus>,
    /// The runtime's name as it reports it (`containerd`, `cri-o`…), the scheme of container IDs
    /// in the status (`containerd://<id>`); empty means [`DEFAULT_RUNTIME_NAME`].
    pub runtime_name: String,
    /// The pod cgroup's settings as read now, when sergeant manages one and the pod runs: the
    /// pod-level resources in force, which the status shows.
    pub pod_cgroup: Option<PodCgroupResources>,
}

/// What the pod actor knows about the pod that the runtime does not.
#[derive(Debug, Clone, Default)]
pub struct Knowledge {
    /// Why a container is not running, by container name (`ContainerCreating`, `PodInitializing`,
    /// `CrashLoopBackOff`, `ErrImagePull`, `ImagePullBackOff`, `CreateContainerError`…). Shown
    /// as the container's waiting state whenever it is not running and the pod is not being
    /// deleted; the last terminated attempt then moves to `lastState`.
    pub waiting: BTreeMap<String, Waiting>,
    /// Readiness-probe results by container name. Absent: the container has no result yet,
    /// which means ready when it has no readiness probe and not ready when it has one.
    pub ready: BTreeMap<String, bool>,
    /// Startup-probe results by container name. Absent: started when it has no startup probe,
    /// not started when it has one.
    pub started: BTreeMap<String, bool>,
    /// Termination messages by container name (read from the termination-message file or the
    /// log tail), for the container's most recent terminated attempt.
    pub termination_messages: BTreeMap<String, String>,
    /// When the actor first saw the pod; used when the pod has no `status.startTime` yet.
    pub start_time: Option<Time>,
    /// Deletion is in progress: nothing will be (re)started, so once no container runs the pod
    /// is terminal (Succeeded if every container exited 0, else Failed).
    pub terminating: bool,
    /// The pod was refused (admission): `(reason, message)`; the pod's phase is then Failed.
    pub rejection: Option<(String, String)>,
    /// The pod failed as a whole while on the node (its `activeDeadlineSeconds` passed):
    /// `(reason, message)`. The phase is Failed, nothing restarts, and the container statuses
    /// still show what the runtime has.
    pub failure: Option<(String, String)>,
    /// The node's addresses, primary first: the pod's `hostIP`/`hostIPs`, and its pod IPs when
    /// it uses the host network.
    pub host_ips: Vec<String>,
    /// The time that stamps conditions whose status changed; `None` means the wall clock.
    pub now: Option<Time>,
    /// The pod's readiness gates' conditions as the API server holds them (other clients set
    /// them, through the status subresource; see [`crate::pod_update::gate_conditions`]):
    /// `Ready` waits on the gates' conditions found here (or, failing that, in the previous
    /// status).
    pub api_conditions: Vec<PodCondition>,
    /// A sync is resetting the pod in place (a `RestartAllContainers` rule), or has just
    /// done so: the containers the runtime no longer has were taken out to start afresh.
    pub resetting: bool,
    /// The feature gates that decide whether an exited container runs again (the phase) and
    /// whether the pod resets (its condition).
    pub restart_gates: RestartGates,
    /// Why the pod's in-place resize could not be carried out (`PodResizeInProgress` with
    /// reason `Error`), when it could not.
    pub resize_error: Option<String>,
    /// The resize the pod asks for that the node has not allocated, and why
    /// (`PodResizePending`); the pod itself carries its allocated resources.
    pub resize_pending: Option<PendingResize>,
    /// The `InPlacePodLevelResourcesVerticalScaling` gate is off: the status shows no
    /// pod-level `resources` or `allocatedResources`, as upstream's kubelet then.
    pub without_pod_level_resources: bool,
}

/// Why a container is not running, as the pod actor knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// A short CamelCase reason such as `CrashLoopBackOff`.
    pub reason: String,
    /// A human-readable detail, possibly empty.
    pub message: String,
}

/// The status of `pod` as the upstream kubelet would report it, from what the runtime shows
/// (`observed`) and what the pod actor knows (`knowledge`). The pod's current `status` is read
/// as the previous one: it keeps condition transition times, the start time, the QoS class,
/// pod IPs while the sandbox shows none, and the last state of containers the runtime forgot.
#[must_use]
pub fn compute(pod: &Pod, observed: &Observed, knowledge: &Knowledge) -> PodStatus {
    let empty_spec = PodSpec::default();
    let spec = pod.spec.as_ref().unwrap_or(&empty_spec);
    let empty_status = PodStatus::default();
    let previous = pod.status.as_ref().unwrap_or(&empty_status);

    let host = network::host_ips(&knowledge.host_ips);
    let base = PodStatus {
        observed_generation: pod.metadata.generation,
        start_time: previous
            .start_time
            .clone()
            .or_else(|| knowledge.start_time.clone()),
        qos_class: Some(
            previous
                .qos_class
                .clone()
                .filter(|class| !class.is_empty())
                .unwrap_or_else(|| crate::spec::qos_class(pod).as_str().to_owned()),
        ),
        host_ip: host.first().map(|ip| ip.ip.clone()),
        host_ips: (!host.is_empty()).then_some(host),
        ..PodStatus::default()
    };
    if let Some((reason, message)) = &knowledge.rejection {
        return PodStatus {
            phase: Some(phase::FAILED.to_owned()),
            reason: Some(reason.clone()),
            message: Some(message.clone()),
            ..base
        };
    }

    let attempts = runtime::index(&observed.containers);
    let init_specs = spec.init_containers.as_deref().unwrap_or_default();
    let ephemeral_specs: Vec<Container> = ephemeral_containers(pod)
        .map(ephemeral_as_container)
        .collect();
    let any_running = init_specs
        .iter()
        .chain(&spec.containers)
        .chain(&ephemeral_specs)
        .any(|c| {
            attempts
                .get(c.name.as_str())
                .is_some_and(|a| a.is_running())
        });
    let builder = Builder {
        knowledge,
        runtime_name: if observed.runtime_name.is_empty() {
            DEFAULT_RUNTIME_NAME
        } else {
            &observed.runtime_name
        },
        previous: previous
            .init_container_statuses
            .iter()
            .chain(&previous.container_statuses)
            .chain(&previous.ephemeral_container_statuses)
            .flatten()
            .collect(),
        terminal: (knowledge.terminating || knowledge.failure.is_some()) && !any_running,
        restarting: reset::restarting(spec, &attempts, previous, knowledge),
    };
    let build = |c: &Container, kind: Kind, default_reason: &str| {
        builder.build(c, kind, attempts.get(c.name.as_str()), default_reason)
    };

    let init: Vec<(Kind, ContainerStatus)> = init_specs
        .iter()
        .map(|c| {
            let kind = Kind::of_init(c);
            (kind, build(c, kind, container::POD_INITIALIZING))
        })
        .collect();
    let not_initialized = conditions::not_initialized(&init);
    let regular_default = if not_initialized.is_empty() {
        container::CONTAINER_CREATING
    } else {
        container::POD_INITIALIZING
    };
    let regular: Vec<ContainerStatus> = spec
        .containers
        .iter()
        .map(|c| build(c, Kind::Regular, regular_default))
        .collect();
    let ephemeral: Vec<ContainerStatus> = ephemeral_specs
        .iter()
        .map(|c| build(c, Kind::Ephemeral, regular_default))
        .collect();

    let phase = if knowledge.failure.is_some() {
        phase::FAILED
    } else {
        phase::of(
            spec,
            &init,
            &regular,
            builder.terminal,
            knowledge.restart_gates,
        )
    };
    let (pod_ip, pod_ips) = network::pod_ips(
        spec,
        observed.sandbox.as_ref(),
        base.host_ips.as_deref().unwrap_or_default(),
        previous,
    );
    let finished = phase == phase::SUCCEEDED || phase == phase::FAILED;
    let facts = conditions::Facts {
        ready_to_start_containers: network::sandbox_ready(spec, observed.sandbox.as_ref()),
        not_initialized,
        not_ready: conditions::not_ready(&init, &regular),
        readiness_gates: spec
            .readiness_gates
            .iter()
            .flatten()
            .map(|gate| gate.condition_type.as_str())
            .collect(),
        api_conditions: &knowledge.api_conditions,
        phase,
        restarting_all: reset::condition(
            spec,
            &attempts,
            builder.restarting,
            phase,
            knowledge.restart_gates,
        ),
        // A finished pod has no resize to show, as upstream clears both then.
        resize_error: knowledge.resize_error.as_deref().filter(|_| !finished),
        resize_pending: knowledge.resize_pending.as_ref().filter(|_| !finished),
    };
    let now = knowledge.now.clone().unwrap_or_else(time::now);
    let pod_level = !knowledge.without_pod_level_resources;
    let conditions = conditions::build(
        &facts,
        previous.conditions.as_deref().unwrap_or_default(),
        &now,
        pod.metadata.generation,
    );

    PodStatus {
        phase: Some(phase.to_owned()),
        conditions: Some(conditions),
        pod_ip,
        pod_ips,
        init_container_statuses: (!init.is_empty())
            .then(|| init.into_iter().map(|(_, status)| status).collect()),
        container_statuses: Some(regular),
        ephemeral_container_statuses: (!ephemeral.is_empty()).then_some(ephemeral),
        allocated_resources: pod_level.then(|| resources::pod_allocated(pod)).flatten(),
        resources: pod_level.then(|| {
            resources::pod_resources(
                pod,
                observed
                    .pod_cgroup
                    .as_ref()
                    .filter(|_| phase == phase::RUNNING),
                previous.resources.as_ref(),
            )
        }),
        reason: knowledge.failure.as_ref().map(|(reason, _)| reason.clone()),
        message: knowledge
            .failure
            .as_ref()
            .map(|(_, message)| message.clone()),
        ..base
    }
}

#[cfg(test)]
#[path = "compute_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "ephemeral_tests.rs"]
mod ephemeral_tests;
