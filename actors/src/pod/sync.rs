//! One level-triggered sync of a pod: compare the whole spec with everything the runtime shows
//! and act on the difference — sandbox, then init containers in order, sidecars, then app
//! containers, replacing running ones whose definition changed — and report what the pod
//! looks like afterwards. Between any two runtime actions it checks the pod actor's
//! [`Interrupt`], and stops there once the pod is being stopped.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sergeant_messages::pods::core::{Container, Pod};
use sergeant_messages::runtime::cri;
use tokio::sync::oneshot;

use super::file_work::run_file_work;
use super::interrupt::{Interrupt, Interrupted};
use super::kill::{self, kill_container};
use super::look::{look_after, Look, Progress, RuntimeChanges};
use super::observe::observe;
use super::start::{start_container, NotStarted, StartRequest};
use super::termination::read_messages;
use super::volume_events::record_volume_failure;
use crate::runtime::RuntimePort;
use sergeant_core::backoff::{Backoff, BackoffPolicy};
use sergeant_core::hash::container_hash;
use sergeant_core::kind::ContainerKind;
use sergeant_core::runtime::{ObservedContainer, PodRuntime};
use sergeant_core::spec::{self, NodeContext, PodObjects};
use sergeant_core::status::{sandbox_ips, Waiting};
use sergeant_core::time::go_duration;
use sergeant_core::volumes::{self, Payload, VolumeError, VolumePlan};
use sergeant_kube_api::{fetch_pod_objects, TokenCache};

/// Everything one sync needs; the pod actor hands it over and gets a [`SyncOutcome`] back.
pub struct SyncInput {
    /// The desired pod.
    pub pod: Arc<Pod>,
    /// The runtime.
    pub port: RuntimePort,
    /// The node's settings for pods.
    pub node: Arc<NodeContext>,
    /// Container restart back-off, by container name.
    pub restarts: Backoff,
    /// Image pull back-off, by image.
    pub pulls: Backoff,
    /// The crash-loop periods.
    pub restart_policy: BackoffPolicy,
    /// The pod failed as a whole and was stopped: only look, change nothing.
    pub halted: bool,
    /// The API server, in managed mode: config maps, secrets and tokens are read through it.
    pub api: Option<kube::Client>,
    /// The pod's service account tokens.
    pub tokens: TokenCache,
    /// Raised by the pod actor once it stops the pod: the sync stops at its next check.
    pub interrupt: Interrupt,
    /// Where the look the sync begins with goes (with when it was begun) before the sync
    /// acts, as upstream reports the status a sync starts from: what set the sync off (a
    /// container that died) is reported at once, not only once a long sync ends.
    pub first_look: Option<oneshot::Sender<(PodRuntime, Instant)>>,
}

/// What a sync did and found.
pub struct SyncOutcome {
    /// The look at the pod after the sync's actions; `None` when it could not be taken
    /// (nothing was measured, so nothing is to be reported).
    pub look: Option<Look>,
    /// Why containers that are not running are waiting.
    pub waiting: BTreeMap<String, Waiting>,
    /// Updated restart back-off.
    pub restarts: Backoff,
    /// Updated pull back-off.
    pub pulls: Backoff,
    /// The tokens, with those obtained by this sync.
    pub tokens: TokenCache,
    /// When the next sync is due because a back-off ends, if any.
    pub next_sync: Option<Instant>,
    /// A failure that stopped the sync early (the runtime was unavailable, say).
    pub error: Option<String>,
}

/// Runs one sync of `input.pod`. After a failure the pod is looked at afresh, never through
/// a look taken before it.
///
/// # Errors
/// [`Interrupted`]: the pod is being stopped, and the sync stopped between two actions
/// without a last look (the pod's termination takes its own).
pub async fn sync(mut input: SyncInput) -> Result<SyncOutcome, Interrupted> {
    let mut progress = Progress::default();
    let (before, mut error) = if input.halted {
        (None, None)
    } else {
        match reconcile(&mut input, &mut progress).await {
            Ok(found) => (Some(found), None),
            Err(Stopped::Interrupted) => return Err(Interrupted),
            Err(Stopped::Failed(error)) => (None, Some(error)),
        }
    };
    // The look the reconcile worked from still holds when it changed nothing.
    let begun = match &before {
        Some((_, begun)) if matches!(progress.changes, RuntimeChanges::Unchanged) => *begun,
        _ => Instant::now(),
    };
    let before = before.map(|(runtime, _)| runtime);
    let look = match look_after(&input.port, uid(&input.pod), before, progress.changes).await {
        Ok(runtime) => Some(Look {
            // Small files in the pod's directory and the tails of its logs, read on this
            // thread (see `file_work`); nothing when no container exited.
            termination_messages: read_messages(&runtime),
            runtime,
            begun,
            waiting: progress.waiting.clone(),
        }),
        Err(failed) => {
            let look = format!("the pod could not be looked at: {failed}");
            error = Some(error.map_or_else(|| look.clone(), |e| format!("{e}; {look}")));
            None
        }
    };
    let now = Instant::now();
    let next_sync = [
        input.restarts.next_expiry(now),
        input.pulls.next_expiry(now),
    ]
    .into_iter()
    .flatten()
    .min();
    Ok(SyncOutcome {
        look,
        waiting: progress.waiting,
        restarts: input.restarts,
        pulls: input.pulls,
        tokens: input.tokens,
        next_sync,
        error,
    })
}

/// Why a reconcile stopped early.
#[derive(Debug)]
enum Stopped {
    /// The pod is being stopped.
    Interrupted,
    /// A failure: the runtime's, an unusable spec or volume.
    Failed(String),
}

impl From<String> for Stopped {
    fn from(error: String) -> Self {
        Self::Failed(error)
    }
}

impl From<Interrupted> for Stopped {
    fn from(_: Interrupted) -> Self {
        Self::Interrupted
    }
}

fn uid(pod: &Pod) -> &str {
    pod.metadata.uid.as_deref().unwrap_or_default()
}

/// What to do with one container after looking at its newest instance.
enum Step {
    /// Running (or done and not to be restarted): go on to the next container.
    Next,
    /// Not finished yet (an init container running): stop here for this sync.
    Wait,
}

/// Brings the runtime in line with the pod spec: a sandbox, then its containers in order.
/// Returns the look at the runtime it worked from (taken at its start, or again after a new
/// sandbox) with when it was begun, and records in `progress` what it changed since and why
/// containers wait.
///
/// # Errors
/// A failure that stopped it (the runtime's, an unusable spec or volume), or the interrupt.
async fn reconcile(
    input: &mut SyncInput,
    progress: &mut Progress,
) -> Result<(PodRuntime, Instant), Stopped> {
    let pod = Arc::clone(&input.pod);
    let node = Arc::clone(&input.node);
    let mut begun = Instant::now();
    let mut runtime = observe(&input.port, uid(&pod))
        .await
        .map_err(|e| e.to_string())?;
    if let Some(first_look) = input.first_look.take() {
        // The pod actor may be gone; the sync goes on regardless.
        let _ = first_look.send((runtime.clone(), begun));
    }
    let plan = VolumePlan::for_pod(&pod, &node).map_err(|e| e.to_string())?;
    input.interrupt.check()?;
    let objects = Arc::new(match &input.api {
        Some(client) => fetch_pod_objects(client, &pod, &mut input.tokens).await,
        None => PodObjects::default(),
    });
    let (payloads, failures) = volumes::api_payloads(&plan, &pod, &node, &objects);
    let attempt = sandbox_attempt(&runtime);
    let sandbox_config = if runtime.ready_sandbox().is_none() {
        for name in all_containers(&pod).map(|(c, _)| c.name.clone()) {
            let creating = Waiting {
                reason: "ContainerCreating".into(),
                message: String::new(),
            };
            progress.waiting.insert(name, creating);
        }
        if !failures.is_empty() {
            return Err(volume_failures(&failures).into());
        }
        let config = start_sandbox(input, &runtime, &plan, payloads, attempt).await?;
        progress.waiting.clear();
        // Go on with the containers in this same sync: the new sandbox is ready.
        begun = Instant::now();
        runtime = observe(&input.port, uid(&pod))
            .await
            .map_err(|e| e.to_string())?;
        config
    } else {
        refresh_volumes(input, &plan, &payloads, &failures, attempt)?
    };
    let Some(sandbox_id) = runtime.ready_sandbox().map(|s| s.id.clone()) else {
        return Err("the new sandbox is not ready".to_owned().into());
    };
    let pod_ips = runtime
        .sandbox_status
        .as_ref()
        .map(sandbox_ips)
        .unwrap_or_default();
    let request = |container: &Container, kind: ContainerKind| StartRequest {
        pod: Arc::clone(&pod),
        container: container.clone(),
        kind,
        sandbox_id: sandbox_id.clone(),
        sandbox_config: sandbox_config.clone(),
        restart_count: runtime
            .latest_anywhere(&container.name)
            .map_or(0, |c| c.restart_count() + 1),
        pod_ips: pod_ips.clone(),
        objects: Arc::clone(&objects),
    };
    let never = pod.spec.as_ref().and_then(|s| s.restart_policy.as_deref()) == Some("Never");
    let on_failure =
        pod.spec.as_ref().and_then(|s| s.restart_policy.as_deref()) == Some("OnFailure");
    for (container, kind) in all_containers(&pod) {
        input.interrupt.check()?;
        let latest = runtime.latest(&sandbox_id, &container.name);
        let step = match latest.map(|c| (c.state(), c.status.exit_code)) {
            None => {
                run(input, request(container, kind), &plan, progress).await?;
                if kind == ContainerKind::Init {
                    Step::Wait
                } else {
                    Step::Next
                }
            }
            Some((cri::ContainerState::ContainerCreated, _)) => {
                // A leftover of a start that failed half-way: replace it.
                if let Some(stale) = latest {
                    progress.changes = RuntimeChanges::Other;
                    let id = stale.status.id.clone();
                    input
                        .port
                        .call(cri::RemoveContainerRequest { container_id: id })
                        .await
                        .map_err(|e| e.to_string())?;
                }
                run(input, request(container, kind), &plan, progress).await?;
                if kind == ContainerKind::Init {
                    Step::Wait
                } else {
                    Step::Next
                }
            }
            Some((cri::ContainerState::ContainerRunning, _)) => {
                if kind == ContainerKind::Init {
                    Step::Wait
                } else {
                    if let Some(running) = latest.filter(|c| definition_changed(c, container)) {
                        replace(input, running, request(container, kind), &plan, progress).await?;
                    }
                    Step::Next
                }
            }
            Some((_, code)) => {
                let restart = match kind {
                    ContainerKind::Sidecar => true,
                    ContainerKind::Init => code != 0 && !never,
                    ContainerKind::Regular => !never && (!on_failure || code != 0),
                };
                if restart {
                    restart_after_backoff(input, request(container, kind), latest, &plan, progress)
                        .await?;
                }
                match kind {
                    ContainerKind::Init if code != 0 => Step::Wait,
                    _ => Step::Next,
                }
            }
        };
        if matches!(step, Step::Wait) {
            break;
        }
    }
    Ok((runtime, begun))
}

/// The spec's containers in start order: init containers (sidecars among them), then app
/// containers.
fn all_containers(pod: &Pod) -> impl Iterator<Item = (&Container, ContainerKind)> {
    let spec = pod.spec.as_ref();
    let init = spec
        .and_then(|s| s.init_containers.as_ref())
        .into_iter()
        .flatten()
        .map(|c| {
            let sidecar = c.restart_policy.as_deref() == Some("Always");
            (
                c,
                if sidecar {
                    ContainerKind::Sidecar
                } else {
                    ContainerKind::Init
                },
            )
        });
    let regular = spec
        .into_iter()
        .flat_map(|s| s.containers.iter())
        .map(|c| (c, ContainerKind::Regular));
    init.chain(regular)
}

fn sandbox_attempt(runtime: &PodRuntime) -> u32 {
    runtime
        .sandboxes
        .first()
        .and_then(|s| s.metadata.as_ref())
        .map_or(0, |m| m.attempt + 1)
}

/// Counts and logs volume failures; the error of a sync they stop, naming every one.
fn volume_failures(failures: &[VolumeError]) -> String {
    for failure in failures {
        record_volume_failure(failure);
    }
    failures
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Brings the API-backed volumes of a running pod up to date. A volume that cannot be updated
/// keeps its content, as upstream: the failure is counted and logged, the pod goes on. Returns
/// the sandbox configuration (the runtime wants it again to create containers). Both are file
/// work in places sergeant owns (only API-backed volumes are written again, in the pod's own
/// directory), run on the caller's thread (see [`super::file_work`]).
///
/// # Errors
/// The pod's sandbox configuration cannot be built (see [`spec::sandbox_config`]).
fn refresh_volumes(
    input: &SyncInput,
    plan: &VolumePlan,
    payloads: &BTreeMap<String, Payload>,
    failures: &[VolumeError],
    attempt: u32,
) -> Result<cri::PodSandboxConfig, String> {
    let more = sergeant_host::volumes::refresh_api_volumes(plan, payloads);
    let resolv_conf = sergeant_host::dns::read_resolv_conf(&input.node);
    let config = spec::sandbox_config(&input.pod, &input.node, attempt, resolv_conf.as_deref());
    let failed: Vec<VolumeError> = failures.iter().cloned().chain(more).collect();
    if !failed.is_empty() {
        tracing::warn!("volumes not updated: {}", volume_failures(&failed));
    }
    config.map_err(|e| e.to_string())
}

/// Replaces dead sandboxes with a fresh one (its `attempt`-th), its configuration, volumes and
/// cgroup prepared as one piece of file work ([`VolumePlan::reach`] tells its thread).
/// Returns the configuration it was started with.
///
/// # Errors
/// The runtime's failure to stop an old sandbox or run the new one, an invalid sandbox
/// configuration, or a cgroup or volume that cannot be set up; or the interrupt.
async fn start_sandbox(
    input: &SyncInput,
    runtime: &PodRuntime,
    plan: &VolumePlan,
    payloads: BTreeMap<String, Payload>,
    attempt: u32,
) -> Result<cri::PodSandboxConfig, Stopped> {
    for old in &runtime.sandboxes {
        input.interrupt.check()?;
        input
            .port
            .call(cri::StopPodSandboxRequest {
                pod_sandbox_id: old.id.clone(),
            })
            .await
            .map_err(|e| e.to_string())?;
    }
    let cgroup = spec::pod_cgroup_parent(&input.pod, &input.node);
    let pids_limit = input.node.pod_pids_limit;
    let (pod, node, plan) = (
        Arc::clone(&input.pod),
        Arc::clone(&input.node),
        plan.clone(),
    );
    let config = run_file_work(
        plan.reach(),
        "sandbox setup",
        move || -> Result<_, String> {
            let resolv_conf = sergeant_host::dns::read_resolv_conf(&node);
            let config = spec::sandbox_config(&pod, &node, attempt, resolv_conf.as_deref())
                .map_err(|e| e.to_string())?;
            sergeant_host::cgroup::ensure_pod_cgroup(&cgroup, pids_limit)
                .map_err(|e| e.to_string())?;
            sergeant_host::volumes::setup_volumes(&plan, &payloads)
                .map_err(|e| volume_failures(&[e]))?;
            Ok(config)
        },
    )
    .await??;
    input.interrupt.check()?;
    input
        .port
        .call(cri::RunPodSandboxRequest {
            config: Some(config.clone()),
            runtime_handler: String::new(),
        })
        .await
        .map_err(|e| e.to_string())?;
    Ok(config)
}

/// Whether the running container was created from another spec than `spec` (the hash
/// recorded on it differs), as after an image update. A container without a recorded hash was
/// not made by sergeant's sync and is left alone.
fn definition_changed(running: &ObservedContainer, spec: &Container) -> bool {
    running
        .spec_hash()
        .is_some_and(|hash| hash != container_hash(spec))
}

/// Replaces a running container whose definition changed, as upstream does whatever the
/// restart policy and without back-off: a graceful kill (its preStop hook, the pod's grace
/// period, a Killing event saying why), then a start from the new spec, its restart count one
/// more.
///
/// # Errors
/// The runtime's failure to stop it (the sync is retried), or the interrupt.
async fn replace(
    input: &mut SyncInput,
    running: &ObservedContainer,
    request: StartRequest,
    plan: &VolumePlan,
    progress: &mut Progress,
) -> Result<(), Stopped> {
    let name = request.container.name.clone();
    let why = match request.kind {
        ContainerKind::Regular => format!("Container {name} definition changed, will be restarted"),
        ContainerKind::Init | ContainerKind::Sidecar => {
            format!("Init container {name} definition changed")
        }
    };
    tracing::info!(container = name, id = running.status.id, "{why}");
    let pod = Arc::clone(&request.pod);
    let grace = kill::pod_grace(&pod);
    kill_container(
        &input.port,
        uid(&pod),
        &running.status.id,
        &pod,
        grace,
        &why,
    )
    .await?;
    progress.changes = RuntimeChanges::Other;
    run(input, request, plan, progress).await?;
    Ok(())
}

/// Restarts an exited container unless it is in back-off.
///
/// # Errors
/// The interrupt.
async fn restart_after_backoff(
    input: &mut SyncInput,
    request: StartRequest,
    exited: Option<&ObservedContainer>,
    plan: &VolumePlan,
    progress: &mut Progress,
) -> Result<(), Interrupted> {
    let name = request.container.name.clone();
    let now = Instant::now();
    if let Some(exited) = exited {
        let started_ago = wall_clock_age(exited.status.started_at);
        input.restarts.resume(
            &name,
            exited.restart_count(),
            started_ago,
            now,
            input.restart_policy,
        );
    }
    if let Err(remaining) = input.restarts.check(&name, now) {
        let delay = input.restarts.delay(&name).unwrap_or(remaining);
        progress.waiting.insert(
            name.clone(),
            Waiting {
                reason: "CrashLoopBackOff".into(),
                message: format!(
                    "back-off {} restarting failed container={name} pod={}",
                    go_duration(delay),
                    pod_name(&request.pod)
                ),
            },
        );
        return Ok(());
    }
    let ran_for = exited.map_or(Duration::ZERO, |c| {
        Duration::from_nanos(u64::try_from(c.status.finished_at - c.status.started_at).unwrap_or(0))
    });
    input
        .restarts
        .restarted(&name, ran_for, now, input.restart_policy);
    run(input, request, plan, progress).await
}

/// Starts one container, recording in `progress` what it started, or why the container waits
/// (a start that failed may have left a container behind: a change of another kind).
///
/// # Errors
/// The interrupt: the start was abandoned part-way.
async fn run(
    input: &mut SyncInput,
    request: StartRequest,
    plan: &VolumePlan,
    progress: &mut Progress,
) -> Result<(), Interrupted> {
    let name = request.container.name.clone();
    let sandbox_id = request.sandbox_id.clone();
    let started = start_container(
        &input.port,
        &input.node,
        plan,
        &mut input.pulls,
        &input.interrupt,
        request,
    )
    .await;
    match started {
        Ok(container_id) => progress.changes.started(sandbox_id, container_id),
        Err(NotStarted::Waiting(why)) => {
            progress.waiting.insert(name, why);
            progress.changes = RuntimeChanges::Other;
        }
        Err(NotStarted::Interrupted) => {
            progress.changes = RuntimeChanges::Other;
            return Err(Interrupted);
        }
    }
    Ok(())
}

/// How long ago a CRI timestamp (nanoseconds since the epoch) was.
fn wall_clock_age(nanos: i64) -> Duration {
    let then = std::time::UNIX_EPOCH + Duration::from_nanos(u64::try_from(nanos).unwrap_or(0));
    std::time::SystemTime::now()
        .duration_since(then)
        .unwrap_or(Duration::ZERO)
}

fn pod_name(pod: &Pod) -> String {
    format!(
        "{}_{}({})",
        pod.metadata.name.as_deref().unwrap_or_default(),
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        uid(pod)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use sergeant_core::labels;

    fn observed(hash: Option<String>) -> ObservedContainer {
        ObservedContainer {
            sandbox_id: "s".to_owned(),
            status: cri::ContainerStatus {
                annotations: hash
                    .map(|h| (labels::CONTAINER_HASH.to_owned(), h))
                    .into_iter()
                    .collect(),
                ..Default::default()
            },
        }
    }

    #[test]
    fn a_container_is_replaced_only_when_its_recorded_hash_differs() {
        let spec = Container {
            name: "app".to_owned(),
            image: Some("app:1".to_owned()),
            ..Default::default()
        };
        let mut updated = spec.clone();
        updated.image = Some("app:2".to_owned());
        let running = observed(Some(container_hash(&spec)));
        assert!(!definition_changed(&running, &spec));
        assert!(definition_changed(&running, &updated));
        assert!(!definition_changed(&observed(None), &updated));
    }
}
