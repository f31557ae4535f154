//! In-place resize of a pod's running containers and its pod cgroup, as
//! `sergeant_core::resize::plan_resize` decides it from the pod, the runtime's look and the pod
//! cgroup read now: the pod cgroup raised where it grows, the containers' cgroups updated
//! through the runtime (`UpdateContainerResources`), the pod cgroup lowered where it shrinks.
//! A container whose `resizePolicy` restarts it is the plan's (a kill and a start); the pod
//! cgroup is raised before the plan runs ([`raise_pod_cgroup`]) so a restarted container that
//! grows fits in it, and the rest is applied once the plan is done ([`apply_resize`]).

use std::time::Instant;

use sergeant_core::resize::{plan_resize, ResizeActions};
use sergeant_core::runtime::PodRuntime;
use sergeant_core::spec::{self, PodCgroupResources, SpecError};
use sergeant_host::cgroup::{read_pod_cgroup_resources, set_pod_cgroup_resources};
use sergeant_messages::runtime::cri;

use super::error::Stopped;
use super::look::{Progress, RuntimeChanges};
use super::sync::SyncInput;

/// The pod cgroup's path when sergeant manages it (`cgroupsPerQOS`, on a node with cgroups).
fn pod_cgroup(input: &SyncInput) -> Option<String> {
    (input.node.cgroups_per_qos && input.node.has_cgroups())
        .then(|| spec::pod_cgroup_parent(&input.pod, &input.node))
}

/// What the resize of the pod needs now, with the pod cgroup's path; `None` when nothing.
/// Reads the pod cgroup's few files on the actor thread (a place sergeant owns).
fn decide(
    input: &SyncInput,
    runtime: &PodRuntime,
) -> Result<Option<(Option<String>, ResizeActions)>, SpecError> {
    let Some(sandbox) = runtime.ready_sandbox() else {
        return Ok(None);
    };
    let cgroup = pod_cgroup(input);
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
    Ok((!actions.is_empty()).then_some((cgroup, actions)))
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
    if let Some((cgroup, actions)) = decide(input, runtime)? {
        write(cgroup.as_deref(), actions.pod_cgroup_first.as_ref())?;
    }
    Ok(())
}

/// Applies what the resize of the pod needs now; records the change in `progress` so the
/// next look is a full one. Observes `kubelet_pod_resize_duration_milliseconds`.
///
/// # Errors
///
/// A runtime call or a cgroup write failed (a memory limit below what the container uses is
/// refused by the kernel), or the pod is being stopped.
pub(super) async fn apply_resize(
    input: &SyncInput,
    runtime: &PodRuntime,
    progress: &mut Progress,
) -> Result<(), Stopped> {
    let Some((cgroup, actions)) = decide(input, runtime)? else {
        return Ok(());
    };
    let started = Instant::now();
    progress.changes = RuntimeChanges::Other;
    let result = execute(input, cgroup.as_deref(), &actions).await;
    let millis = started.elapsed().as_secs_f64() * 1000.0;
    let success = if result.is_ok() { "true" } else { "false" };
    metrics::histogram!("kubelet_pod_resize_duration_milliseconds", "success" => success)
        .record(millis);
    result
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
