//! In-place resize (InPlacePodVerticalScaling): what a running container of a pod whose
//! resources changed needs, decided from the pod and what the runtime reports of the
//! container's cgroup — nothing, a restart (its `resizePolicy` says `RestartContainer` for a
//! resource that changed), or an update of its cgroup through the runtime — and what the pod
//! cgroup needs, in an order the kernel accepts (raised before the containers grow, lowered
//! after they shrink). Entry points: [`needs_restart`], the plan's question, and
//! [`plan_resize`], what a sync applies once the plan has nothing else to do.

use k8s_cri::v1::LinuxContainerResources;
use k8s_openapi::api::core::v1::{Container, Pod};

use crate::kind::all_containers;
use crate::labels;
use crate::runtime::{ObservedContainer, PodRuntime};
use crate::spec::{
    container_resources, memory_request_bytes, pod_cgroup_resources, PodCgroupResources,
};

/// The resize policy that restarts a container when its resource changes.
const RESTART_CONTAINER: &str = "RestartContainer";

/// Which of a container's resizable resources differ between two cgroup settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Changed {
    cpu: bool,
    memory: bool,
}

impl Changed {
    fn any(self) -> bool {
        self.cpu || self.memory
    }
}

/// One running container whose cgroup is to be updated in place.
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerUpdate {
    /// Its runtime ID.
    pub id: String,
    /// Its name in the spec.
    pub name: String,
    /// The resources it is to have.
    pub resources: LinuxContainerResources,
    /// The memory limit the runtime reports it has now, in bytes; 0: none.
    pub memory_limit_now: i64,
}

/// What a resize applies, in order: the pod cgroup raised to `pod_cgroup_first`, the
/// containers updated, the pod cgroup set to `pod_cgroup_last`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResizeActions {
    /// The pod cgroup before the containers: each limit at the larger of now and wanted.
    pub pod_cgroup_first: Option<PodCgroupResources>,
    /// The containers to update.
    pub updates: Vec<ContainerUpdate>,
    /// The pod cgroup after the containers: as wanted.
    pub pod_cgroup_last: Option<PodCgroupResources>,
}

impl ResizeActions {
    /// Whether there is nothing to apply.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.pod_cgroup_last.is_none() && self.updates.is_empty()
    }
}

/// Whether the running `observed` instance of `container` must be restarted to take its new
/// resources: a resource that changed has `resizePolicy: RestartContainer`. A change is a
/// cgroup value the runtime reports differently from the pod's spec, or a memory request
/// other than the one the container was made with (no cgroup shows it: the container's
/// [`labels::CONTAINER_MEMORY_REQUEST`] annotation does). A runtime that reports no resources,
/// on a container without that annotation, gives no ground for a restart.
#[must_use]
pub fn needs_restart(pod: &Pod, observed: &ObservedContainer, container: &Container) -> bool {
    let mut changed = changed(pod, observed, container).unwrap_or_default();
    changed.memory |= memory_request_changed(observed, container);
    let restarts = |resource: &str| {
        container.resize_policy.iter().flatten().any(|policy| {
            policy.resource_name == resource && policy.restart_policy == RESTART_CONTAINER
        })
    };
    (changed.cpu && restarts("cpu")) || (changed.memory && restarts("memory"))
}

/// What the running containers of `pod` in the sandbox `sandbox_id` and its pod cgroup need
/// so their cgroups match the pod's spec. `pod_cgroup` is what the pod cgroup holds now
/// (`None`: sergeant does not manage it, or could not read it); `memory_capacity_bytes` is the
/// node's memory, which the containers' OOM scores are computed from. Containers to restart
/// ([`needs_restart`]) are the plan's and left out.
#[must_use]
pub fn plan_resize(
    pod: &Pod,
    runtime: &PodRuntime,
    sandbox_id: &str,
    pod_cgroup: Option<&PodCgroupResources>,
    memory_capacity_bytes: u64,
) -> ResizeActions {
    let mut actions = ResizeActions::default();
    for (container, _) in all_containers(pod) {
        let Some(observed) = runtime
            .latest(sandbox_id, &container.name)
            .filter(|o| o.state() == k8s_cri::v1::ContainerState::ContainerRunning)
        else {
            continue;
        };
        if !changed(pod, observed, container).is_some_and(Changed::any)
            || needs_restart(pod, observed, container)
        {
            continue;
        }
        if let Some(resources) = desired(pod, container, memory_capacity_bytes) {
            let memory_limit_now = observed
                .status
                .resources
                .as_ref()
                .and_then(|r| r.linux.as_ref())
                .map_or(0, |linux| linux.memory_limit_in_bytes);
            actions.updates.push(ContainerUpdate {
                id: observed.status.id.clone(),
                name: container.name.clone(),
                resources,
                memory_limit_now,
            });
        }
    }
    if let Some(now) = pod_cgroup {
        let wanted = pod_cgroup_resources(pod);
        if *now != wanted {
            actions.pod_cgroup_first = Some(larger(now, &wanted));
            actions.pod_cgroup_last = Some(wanted);
        }
    }
    actions
}

/// What differs between the resources `container` should have and those the runtime reports
/// for its instance `observed`; `None` when the runtime reports none or the spec is unusable.
fn changed(pod: &Pod, observed: &ObservedContainer, container: &Container) -> Option<Changed> {
    let reported = observed.status.resources.as_ref()?.linux.as_ref()?;
    let wanted = desired(pod, container, 0)?;
    Some(Changed {
        cpu: wanted.cpu_shares != reported.cpu_shares || quota(&wanted) != quota(reported),
        memory: wanted.memory_limit_in_bytes != reported.memory_limit_in_bytes,
    })
}

/// Whether the memory request `container` asks for differs from the one its running instance
/// `observed` was made with; `false` when the instance does not say (made by an agent that did
/// not record it).
fn memory_request_changed(observed: &ObservedContainer, container: &Container) -> bool {
    observed
        .status
        .annotations
        .get(labels::CONTAINER_MEMORY_REQUEST)
        .and_then(|made_with| made_with.parse::<i64>().ok())
        .is_some_and(|made_with| made_with != memory_request_bytes(container))
}

/// The container's resources from the spec; `None` when a quantity does not parse (its
/// creation reported that already).
fn desired(
    pod: &Pod,
    container: &Container,
    memory_capacity_bytes: u64,
) -> Option<LinuxContainerResources> {
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    container_resources(pod, name, &container.name, container, memory_capacity_bytes).ok()
}

/// The cpu quota in microseconds per 100 ms period; `None` for no quota.
fn quota(resources: &LinuxContainerResources) -> Option<i64> {
    (resources.cpu_quota > 0 && resources.cpu_period > 0).then(|| {
        resources
            .cpu_quota
            .saturating_mul(PodCgroupResources::CPU_PERIOD_US)
            / resources.cpu_period
    })
}

/// Each limit of `a` and `b` at the larger of the two (no limit is the largest).
fn larger(a: &PodCgroupResources, b: &PodCgroupResources) -> PodCgroupResources {
    let max = |x: Option<i64>, y: Option<i64>| x.zip(y).map(|(x, y)| x.max(y));
    PodCgroupResources {
        cpu_shares: a.cpu_shares.max(b.cpu_shares),
        cpu_quota_us: max(a.cpu_quota_us, b.cpu_quota_us),
        memory_limit_bytes: max(a.memory_limit_bytes, b.memory_limit_bytes),
    }
}

#[cfg(test)]
#[path = "resize_tests.rs"]
mod tests;
