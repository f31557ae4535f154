//! The resources a status shows (InPlacePodVerticalScaling, PodLevelResources): a container's
//! `allocatedResources` (the requests the node admitted it with) and `resources` (the
//! requests and limits applied to it: for a running container what the runtime reports of
//! its cgroup, else the allocation), and the pod's `allocatedResources` and `resources`.
//! Entry points: [`container_allocated`], [`container_applied`], [`pod_allocated`],
//! [`pod_resources`].

use std::collections::BTreeMap;

use k8s_cri::v1 as cri;
use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;

use crate::spec::{amount, binary, milli, pod_limits, pod_requests, to_list, PodCgroupResources};

/// Millicores at or below which a cpu request and its shares cannot be told apart (the
/// kernel's minimum of 2 shares): the allocation is shown rather than the measurement.
const MIN_SHARES_MILLI: i64 = 2;
/// Millicores at or below which a cpu limit is the kernel's minimum quota (1 ms per 100 ms).
const MIN_LIMIT_MILLI: i64 = 10;
/// cpu shares per core.
const SHARES_PER_CPU: i64 = 1024;
/// The kernel's minimum cpu shares: what a container that requests no cpu gets.
const MIN_SHARES: i64 = 2;

type List = BTreeMap<String, ApiQuantity>;

/// The container's `allocatedResources`: its requests, absent when it requests nothing.
pub(super) fn container_allocated(spec: &Container) -> Option<List> {
    non_empty(spec.resources.as_ref()?.requests.clone())
}

/// The container's `resources` for its newest runtime instance `latest`: the allocation, with
/// the cpu request and limit and the memory limit the runtime reports for a running one (a
/// cpu or memory limit it does not report stays as the previous status showed it for the same
/// running instance, else the allocation's). `previous` is the container's previous status.
pub(super) fn container_applied(
    spec: &Container,
    latest: &cri::ContainerStatus,
    container_id: &str,
    previous: Option<&ContainerStatus>,
) -> ResourceRequirements {
    let allocated = allocation(spec);
    if latest.state != cri::ContainerState::ContainerRunning as i32 {
        return allocated;
    }
    let measured = latest.resources.as_ref().and_then(|r| r.linux.as_ref());
    let before = previous
        .filter(|p| p.state.as_ref().is_some_and(|s| s.running.is_some()))
        .filter(|p| p.container_id.as_deref() == Some(container_id))
        .and_then(|p| p.resources.as_ref());
    overlay(&allocated, measured, before)
}

/// `allocated` with the cpu request and limit and the memory limit of the cgroup settings
/// `measured` (a cpu or memory limit not measured stays as `before` showed it, else the
/// allocation's; cpu amounts the kernel cannot tell apart from the allocation's keep it).
fn overlay(
    allocated: &ResourceRequirements,
    measured: Option<&cri::LinuxContainerResources>,
    before: Option<&ResourceRequirements>,
) -> ResourceRequirements {
    let mut applied = allocated.clone();
    if let Some(limits) = applied.limits.as_mut() {
        let before = before.and_then(|b| b.limits.as_ref());
        let cpu = measured.and_then(cpu_limit_milli);
        let allocated_cpu = cpu_milli(allocated.limits.as_ref());
        overlay_cpu(limits, cpu, allocated_cpu, MIN_LIMIT_MILLI, before);
        match measured.map(|l| l.memory_limit_in_bytes).filter(|b| *b > 0) {
            Some(bytes) => {
                limits.insert("memory".to_owned(), ApiQuantity(binary(bytes)));
            }
            None => keep(limits, before, "memory"),
        }
    }
    if let Some(requests) = applied.requests.as_mut() {
        let before = before.and_then(|b| b.requests.as_ref());
        let cpu = measured.and_then(cpu_request_milli);
        let allocated_cpu = cpu_milli(allocated.requests.as_ref());
        overlay_cpu(requests, cpu, allocated_cpu, MIN_SHARES_MILLI, before);
        // The memory request sets nothing in a cgroup v1 node's cgroups (the runtime reports
        // none): the allocation's stands.
    }
    applied
}

/// The pod's `allocatedResources`: what it requests as a whole (see `spec::pod_requests`).
pub(super) fn pod_allocated(pod: &Pod) -> Option<List> {
    non_empty(Some(to_list(&pod_requests(pod))))
}

/// The pod's `resources`: its pod-level resources with the requests and limits it has as a
/// whole (upstream's effective allocated resources) — for a running pod whose cgroup was read
/// (`cgroup`), with the cpu request and limit and the memory limit in force there, as upstream
/// reports them (a resize not carried out shows the old values). `before` is the previous
/// status's.
pub(super) fn pod_resources(
    pod: &Pod,
    cgroup: Option<&PodCgroupResources>,
    before: Option<&ResourceRequirements>,
) -> ResourceRequirements {
    let declared = pod.spec.as_ref().and_then(|s| s.resources.clone());
    let allocated = ResourceRequirements {
        requests: non_empty(Some(to_list(&pod_requests(pod)))),
        limits: non_empty(Some(to_list(&pod_limits(pod)))),
        ..declared.unwrap_or_default()
    };
    let Some(cgroup) = cgroup else {
        return allocated;
    };
    let measured = cri::LinuxContainerResources {
        cpu_shares: cgroup.cpu_shares,
        cpu_period: PodCgroupResources::CPU_PERIOD_US,
        cpu_quota: cgroup.cpu_quota_us.unwrap_or(0),
        memory_limit_in_bytes: cgroup.memory_limit_bytes.unwrap_or(0),
        ..cri::LinuxContainerResources::default()
    };
    overlay(&allocated, Some(&measured), before)
}

/// The container's requests and limits, empty lists left out.
fn allocation(spec: &Container) -> ResourceRequirements {
    let declared = spec.resources.clone().unwrap_or_default();
    ResourceRequirements {
        requests: non_empty(declared.requests),
        limits: non_empty(declared.limits),
        claims: declared.claims,
    }
}

fn non_empty(list: Option<List>) -> Option<List> {
    list.filter(|l| !l.is_empty())
}

fn cpu_milli(list: Option<&List>) -> i64 {
    amount(list, "cpu").map_or(0, milli)
}

/// The cpu limit of a CFS quota, in millicores; `None` when unlimited.
fn cpu_limit_milli(linux: &cri::LinuxContainerResources) -> Option<i64> {
    if linux.cpu_period <= 0 || linux.cpu_quota <= 0 {
        return None;
    }
    let milli = linux.cpu_quota.saturating_mul(1000) / linux.cpu_period;
    (milli > 0).then_some(milli)
}

/// The cpu request of a cgroup's shares, in millicores rounded up; `None` when unset.
fn cpu_request_milli(linux: &cri::LinuxContainerResources) -> Option<i64> {
    if linux.cpu_shares < MIN_SHARES {
        return None;
    }
    let scaled = linux.cpu_shares.saturating_mul(1000);
    Some(scaled.div_euclid(SHARES_PER_CPU) + i64::from(scaled.rem_euclid(SHARES_PER_CPU) != 0))
}

fn millicores(milli: i64) -> ApiQuantity {
    ApiQuantity(format!("{milli}m"))
}

/// Puts the `measured` cpu amount into `list` — unless it and the `allocated` one are both at
/// or below `floor`, where the kernel cannot tell them apart and the allocation is kept; with
/// nothing measured, the amount `before` showed.
fn overlay_cpu(
    list: &mut List,
    measured: Option<i64>,
    allocated: i64,
    floor: i64,
    before: Option<&List>,
) {
    match measured {
        Some(m) if m > floor || allocated > floor => {
            list.insert("cpu".to_owned(), millicores(m));
        }
        Some(_) => {}
        None => keep(list, before, "cpu"),
    }
}

/// Puts `name` of `before` into `list`, when `before` has it.
fn keep(list: &mut List, before: Option<&List>, name: &str) {
    if let Some(value) = before.and_then(|b| b.get(name)) {
        list.insert(name.to_owned(), value.clone());
    }
}

#[cfg(test)]
#[path = "resources_tests.rs"]
mod tests;
