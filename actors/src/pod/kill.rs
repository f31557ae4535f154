//! Stopping a pod's containers: the whole pod when it terminates ([`kill_pod`]: preStop hooks,
//! then the app containers stopped together within the grace period, then the sidecars one at
//! a time, last defined first, then the sandbox; then the pod's directory (volumes, subPath mounts), the
//! sandbox and the pod cgroup removed), a pod that failed as a whole ([`stop_failed_pod`]:
//! stopped, its volumes torn down), a pod the plan says is done ([`stop_observed`]), and
//! one container the plan kills ([`kill_container`]).

use std::time::{Duration, Instant};

use futures::{stream, StreamExt};
use sergeant_messages::pods::core::Pod;
use sergeant_messages::runtime::cri;
use sergeant_messages::runtime_error::RuntimeError;

use super::error::PodError;
use super::file_work::{run_file_work, Unfinished};
use super::hooks;
use super::observe::observe;
use crate::events::{container_event, reason, EventType};
use crate::runtime::RuntimePort;
use sergeant_core::kind::{termination_groups, ContainerKind};
use sergeant_core::labels;
use sergeant_core::runtime::{ObservedContainer, PodRuntime};
use sergeant_core::spec::{self, NodeContext};
use sergeant_core::volumes::Reach;

/// The extra time upstream gives a preStop hook still running when the grace period ends.
const PRE_STOP_EXTENSION: Duration = Duration::from_secs(2);
/// How many containers of one pod are stopped at once. Every stop is bounded by the pod's
/// grace period (a later one gets what is left of it), so a big pod still stops in about its
/// grace period, without asking the runtime for hundreds of stops at the same moment.
const STOP_CONCURRENCY: usize = 16;

/// Stops and removes everything of the pod `uid` in the runtime and on the node.
///
/// `pod` is the spec when known (its hooks and grace period); a pod found only in the runtime
/// (removed while sergeant was down) is stopped with the grace period its containers carry.
///
/// The pod's directory — its volumes and subPath bind mounts, unmounted first — goes before
/// its sandboxes: if sergeant dies in between, the sandbox left in the runtime makes the
/// next sergeant find the pod again and finish the teardown, so no mount is left behind
/// with nothing to point at it.
///
/// # Errors
/// The first runtime or file-system failure; the caller retries.
pub async fn kill_pod(
    port: &RuntimePort,
    node: &NodeContext,
    uid: &str,
    pod: Option<&Pod>,
    grace: Option<Duration>,
) -> Result<(), PodError> {
    let runtime = stop_pod(port, uid, pod, grace).await?;
    let (owned_node, owned_uid) = (node.clone(), uid.to_owned());
    run_file_work(Reach::Host, "teardown", move || {
        sergeant_host::volumes::teardown_pod_dir(&owned_uid, &owned_node)
    })
    .await
    .map_err(PodError::Unfinished)??;
    for sandbox in &runtime.sandboxes {
        port.call(cri::RemovePodSandboxRequest {
            pod_sandbox_id: sandbox.id.clone(),
        })
        .await?;
    }
    let Some(cgroup) = pod
        .filter(|_| node.has_cgroups())
        .map(|p| spec::pod_cgroup_parent(p, node))
    else {
        return Ok(());
    };
    tokio::task::spawn_blocking(move || sergeant_host::cgroup::remove_pod_cgroup(&cgroup))
        .await
        .map_err(|e| Unfinished::of("cgroup removal", &e))??;
    Ok(())
}

/// Stops a pod that failed as a whole (evicted, past its active deadline) as [`stop_pod`]
/// does, then tears its volumes down (upstream frees a terminated pod's volumes while its
/// object is still there): an emptyDir's space is given back now, not when the pod is
/// deleted. Its stopped containers and the rest of its directory stay, for its status and
/// logs. The teardown, whose size has no bound, runs on the blocking pool.
///
/// # Errors
/// The first runtime or file-system failure; the caller retries.
pub async fn stop_failed_pod(
    port: &RuntimePort,
    node: &NodeContext,
    uid: &str,
    pod: &Pod,
    grace: Option<Duration>,
) -> Result<(), PodError> {
    stop_pod(port, uid, Some(pod), grace).await?;
    free_pod_volumes(node, uid).await?;
    Ok(())
}

/// Tears down the volumes of the stopped pod `uid`, on the blocking pool (their size has no
/// bound); the rest of its directory stays. Answers whether there were any: a pod whose
/// volumes are gone costs one look at its directory.
///
/// # Errors
/// The teardown failed, or did not finish; the caller retries.
pub async fn free_pod_volumes(node: &NodeContext, uid: &str) -> Result<bool, PodError> {
    let (node, uid) = (node.clone(), uid.to_owned());
    let freed = run_file_work(Reach::Host, "volume teardown", move || {
        if !sergeant_host::volumes::pod_volumes_exist(&uid, &node) {
            return Ok(false);
        }
        sergeant_host::volumes::teardown_pod_volumes(&uid, &node).map(|()| true)
    })
    .await
    .map_err(PodError::Unfinished)??;
    Ok(freed)
}

/// Stops the pod `uid` without removing anything (see [`stop_observed`]). What the runtime
/// showed before is returned, so a caller can remove it. A pod that failed as a whole (past
/// its active deadline) stays like this, its containers kept for status and logs.
///
/// # Errors
/// The first runtime failure; the caller retries.
pub async fn stop_pod(
    port: &RuntimePort,
    uid: &str,
    pod: Option<&Pod>,
    grace: Option<Duration>,
) -> Result<PodRuntime, RuntimeError> {
    let runtime = observe(port, uid).await?;
    stop_observed(port, &runtime, pod, grace).await?;
    Ok(runtime)
}

/// Stops what `runtime` shows of a pod within the grace period, in upstream's order
/// ([`termination_groups`]): the app containers together (preStop hooks first), then the
/// sidecars one at a time, last defined first, then anything else; then its sandboxes.
///
/// # Errors
/// The first runtime failure; the caller retries.
pub async fn stop_observed(
    port: &RuntimePort,
    runtime: &PodRuntime,
    pod: Option<&Pod>,
    grace: Option<Duration>,
) -> Result<(), RuntimeError> {
    let running: Vec<&ObservedContainer> = runtime.running().collect();
    let grace = grace.unwrap_or_else(|| grace_of(pod, &running));
    let deadline = Instant::now() + grace;
    let pod_ip = runtime.pod_ip();
    let named: Vec<(&str, ContainerKind)> = running
        .iter()
        .map(|c| {
            let label = c.status.annotations.get(labels::CONTAINER_KIND);
            let kind = label.and_then(|k| ContainerKind::named(k));
            (c.name(), kind.unwrap_or(ContainerKind::Init))
        })
        .collect();
    for group in termination_groups(pod, &named) {
        let stops = group
            .into_iter()
            .map(|i| stop_container(port, running[i], pod, pod_ip.as_deref(), deadline, None));
        let results: Vec<_> = stream::iter(stops)
            .buffer_unordered(STOP_CONCURRENCY)
            .collect()
            .await;
        results.into_iter().collect::<Result<(), _>>()?;
    }
    for sandbox in &runtime.sandboxes {
        port.call(cri::StopPodSandboxRequest {
            pod_sandbox_id: sandbox.id.clone(),
        })
        .await?;
    }
    Ok(())
}

/// Kills one container of the running pod `runtime` shows — its preStop hook, then a stop
/// within `grace` — as the plan asks (a failed liveness or startup probe, a changed
/// definition, an unknown state), `why` being the Killing event's message. A container
/// already gone is fine.
///
/// # Errors
/// The runtime failure.
pub async fn kill_container(
    port: &RuntimePort,
    runtime: &PodRuntime,
    container_id: &str,
    pod: &Pod,
    grace: Duration,
    why: &str,
) -> Result<(), RuntimeError> {
    let Some(container) = runtime
        .containers
        .iter()
        .find(|c| c.status.id == container_id)
    else {
        return Ok(());
    };
    let pod_ip = runtime.pod_ip();
    stop_container(
        port,
        container,
        Some(pod),
        pod_ip.as_deref(),
        Instant::now() + grace,
        Some(why),
    )
    .await
}

/// Runs the container's preStop hook (if any) within the grace period, then stops it with
/// what is left of it. The Killing event says `why`, or by default that it is stopped.
async fn stop_container(
    port: &RuntimePort,
    container: &ObservedContainer,
    pod: Option<&Pod>,
    pod_ip: Option<&str>,
    deadline: Instant,
    why: Option<&str>,
) -> Result<(), RuntimeError> {
    let name = container.name();
    let why = why.map_or_else(|| format!("Stopping container {name}"), str::to_owned);
    container_event(name, EventType::Normal, reason::KILLING, why);
    let spec = pod
        .and_then(|p| p.spec.as_ref())
        .into_iter()
        .flat_map(|s| {
            s.containers
                .iter()
                .chain(s.init_containers.iter().flatten())
        })
        .find(|c| c.name == name);
    let pre_stop = spec
        .and_then(|c| c.lifecycle.as_ref())
        .and_then(|l| l.pre_stop.as_ref());
    if let (Some(spec), Some(handler)) = (spec, pre_stop) {
        let budget = deadline.saturating_duration_since(Instant::now());
        let target = super::target::ContainerTarget {
            container_id: &container.status.id,
            container: spec,
            pod_ip,
        };
        if let Err(message) = hooks::run(port, &target, handler, budget + PRE_STOP_EXTENSION).await
        {
            tracing::warn!(container = name, "preStop hook failed: {message}");
            // As upstream, the event leaves the hook's output out (it may hold secrets).
            let failed = "PreStopHook failed".to_owned();
            container_event(
                name,
                EventType::Warning,
                reason::FAILED_PRE_STOP_HOOK,
                failed,
            );
        }
    }
    let left = deadline.saturating_duration_since(Instant::now());
    // CRI takes whole seconds: round up, so a 2 s grace period is not cut to 1 s by the few
    // milliseconds spent before this call.
    let timeout = i64::try_from(left.as_millis().div_ceil(1000)).unwrap_or(0);
    match port
        .call(cri::StopContainerRequest {
            container_id: container.status.id.clone(),
            timeout,
        })
        .await
    {
        Ok(_) | Err(RuntimeError::NotFound { .. }) => Ok(()),
        Err(err) => Err(err),
    }
}

/// The grace period: the pod's, or the one recorded on its containers, or 30 s.
fn grace_of(pod: Option<&Pod>, running: &[&ObservedContainer]) -> Duration {
    let from_pod = pod
        .and_then(|p| p.spec.as_ref())
        .and_then(|s| s.termination_grace_period_seconds);
    let from_runtime = running.iter().find_map(|c| {
        c.status
            .annotations
            .get(labels::POD_TERMINATION_GRACE_PERIOD)
            .and_then(|g| g.parse::<i64>().ok())
    });
    Duration::from_secs(u64::try_from(from_pod.or(from_runtime).unwrap_or(30)).unwrap_or(30))
}
