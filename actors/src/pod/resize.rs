//! In-place resize of a pod's running containers and its pod cgroup, as
//! `sergeant_core::resize::plan_resize` decides it from the pod, the runtime's look and the pod
//! cgroup read now: the pod cgroup raised where it grows, the containers' cgroups updated
//! through the runtime (`UpdateContainerResources`), the pod cgroup lowered where it shrinks.
//! A container whose `resizePolicy` restarts it is the plan's (a kill and a start); the pod
//! cgroup is raised before the plan runs ([`raise_pod_cgroup`]) so a restarted container that
//! grows fits in it, and the rest is applied once the plan is done ([`apply_resize`]) — unless
//! it lowers a memory limit to or below what is in use (`sergeant_core::resize_memory`), and
//! then nothing is applied and the sync reports why (upstream's `PodResizeInProgress`
//! condition with reason `Error`).

use std::time::Instant;

use sergeant_core::resize::{plan_resize, ResizeActions};
use sergeant_core::resize_memory::{lowered_limits, refusal, LoweredLimits, MemoryInUse};
use sergeant_core::runtime::PodRuntime;
use sergeant_core::spec::{self, PodCgroupResources, SpecError};
use sergeant_host::cgroup::{read_pod_cgroup_resources, set_pod_cgroup_resources};
use sergeant_messages::runtime::cri;

use super::error::Stopped;
use super::look::{Progress, RuntimeChanges};
use super::sync::SyncInput;

/// What a resize of the pod needs now.
struct Decided {
    /// The pod cgroup's path, when sergeant manages it.
    cgroup: Option<String>,
    /// The sandbox the containers run in.
    sandbox_id: String,
    /// What to apply.
    actions: ResizeActions,
    /// The memory limits it lowers.
    lowered: LoweredLimits,
}

/// What the resize of the pod needs now; `None` when nothing. Reads the pod cgroup's few
/// files on the actor thread (a place sergeant owns).
fn decide(input: &SyncInput, runtime: &PodRuntime) -> Result<Option<Decided>, SpecError> {
    let Some(sandbox) = runtime.ready_sandbox() else {
        return Ok(None);
    };
    let cgroup = spec::managed_pod_cgroup(&input.pod, &input.node);
    let now = match &cgroup {
        Some(path) => read_pod_cgroup_resources(path)?,
        None => None,
    };
    let actions = plan_resize(
        &input.pod,
        runtime,
        &sandbox.id,
        now.as_ref(),
        input.node.memory_capacity_bytes,
    );
    let lowered = lowered_limits(&actions, now.as_ref());
    Ok((!actions.is_empty()).then(|| Decided {
        cgroup,
        sandbox_id: sandbox.id.clone(),
        actions,
        lowered,
    }))
}

fn write(cgroup: Option<&str>, resources: Option<&PodCgroupResources>) -> Result<(), SpecError> {
    match (cgroup, resources) {
        (Some(path), Some(resources)) => set_pod_cgroup_resources(path, resources),
        _ => Ok(()),
    }
}

/// Raises the pod cgroup's limits that the pod's spec raised, before the plan starts
/// containers that may need them.
///
/// # Errors
///
/// The pod cgroup cannot be read or written ([`Stopped::Failed`]).
pub(super) fn raise_pod_cgroup(input: &SyncInput, runtime: &PodRuntime) -> Result<(), Stopped> {
    if let Some(decided) = decide(input, runtime)? {
        write(
            decided.cgroup.as_deref(),
            decided.actions.pod_cgroup_first.as_ref(),
        )?;
    }
    Ok(())
}

/// Applies what the resize of the pod needs now; records the change in `progress` so the
/// next look is a full one. Observes `kubelet_pod_resize_duration_milliseconds`. Returns why
/// the resize was not carried out, if it was not: a lowered memory limit with no room for
/// what is in use (nothing is applied then), or the runtime or the kernel refused a change.
///
/// # Errors
///
/// The pod is being stopped ([`Stopped::Interrupted`]), or the pod cgroup cannot be read.
pub(super) async fn apply_resize(
    input: &SyncInput,
    runtime: &PodRuntime,
    progress: &mut Progress,
) -> Result<Option<String>, Stopped> {
    let Some(decided) = decide(input, runtime)? else {
        return Ok(None);
    };
    if !decided.lowered.is_empty() {
        let in_use = memory_in_use(input, &decided).await?;
        if let Some(why) = refusal(&decided.lowered, &in_use) {
            tracing::warn!("resize not applied: {why}");
            return Ok(Some(why));
        }
    }
    let started = Instant::now();
    progress.changes = RuntimeChanges::Other;
    let result = execute(input, decided.cgroup.as_deref(), &decided.actions).await;
    let millis = started.elapsed().as_secs_f64() * 1000.0;
    let success = if result.is_ok() { "true" } else { "false" };
    metrics::histogram!("kubelet_pod_resize_duration_milliseconds", "success" => success)
        .record(millis);
    match result {
        Ok(()) => Ok(None),
        Err(Stopped::Interrupted) => Err(Stopped::Interrupted),
        Err(Stopped::Failed(error)) => {
            tracing::warn!("resize failed: {error}");
            Ok(Some(error.to_string()))
        }
    }
}

/// The memory the pod cgroup and the containers whose limits `decided` lowers use now: the
/// cgroup's usage as the kernel counts it, the containers' from the runtime's stats. One that
/// cannot be measured is left out (and the resize then refused for it, as upstream).
async fn memory_in_use(input: &SyncInput, decided: &Decided) -> Result<MemoryInUse, Stopped> {
    let pod = match (&decided.cgroup, decided.lowered.pod) {
        (Some(path), Some(_)) => sergeant_host::cgroup::memory(path)
            .ok()
            .flatten()
            .map(|m| m.usage_bytes),
        _ => None,
    };
    let mut in_use = MemoryInUse {
        pod,
        ..MemoryInUse::default()
    };
    if decided.lowered.containers.is_empty() {
        return Ok(in_use);
    }
    let stats = input
        .port
        .call(cri::ListContainerStatsRequest {
            filter: Some(cri::ContainerStatsFilter {
                pod_sandbox_id: decided.sandbox_id.clone(),
                ..Default::default()
            }),
        })
        .await?;
    for stat in stats.stats {
        let id = stat.attributes.as_ref().map(|a| a.id.as_str());
        let used = stat
            .memory
            .as_ref()
            .and_then(|m| m.usage_bytes.as_ref())
            .map(|v| v.value);
        let lowered = decided
            .lowered
            .containers
            .iter()
            .find(|(_, container_id, _)| Some(container_id.as_str()) == id);
        if let (Some((name, _, _)), Some(used)) = (lowered, used) {
            in_use.containers.insert(name.clone(), used);
        }
    }
    Ok(in_use)
}

async fn execute(
    input: &SyncInput,
    cgroup: Option<&str>,
    actions: &ResizeActions,
) -> Result<(), Stopped> {
    write(cgroup, actions.pod_cgroup_first.as_ref())?;
    for update in &actions.updates {
        input.interrupt.check()?;
        input
            .port
            .call(cri::UpdateContainerResourcesRequest {
                container_id: update.id.clone(),
                linux: Some(update.resources.clone()),
                ..Default::default()
            })
            .await?;
        tracing::info!(
            container = %update.name,
            cpu_shares = update.resources.cpu_shares,
            cpu_quota = update.resources.cpu_quota,
            memory_limit = update.resources.memory_limit_in_bytes,
            "container resized in place"
        );
    }
    write(cgroup, actions.pod_cgroup_last.as_ref())?;
    if let Some(last) = &actions.pod_cgroup_last {
        tracing::info!(?last, "pod cgroup resized");
    }
    Ok(())
}
