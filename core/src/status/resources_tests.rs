use super::*;
use crate::status::testing::{
    container_status, exited, knowledge, observed, pod, running, runtime_container,
};
use crate::status::{compute, Knowledge};
use crate::testing::{resources, with_pod_resources};
use k8s_openapi::api::core::v1::{ContainerState, ContainerStateRunning, PodStatus};

fn list(pairs: &[(&str, &str)]) -> Option<List> {
    (!pairs.is_empty()).then(|| {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), ApiQuantity((*v).to_owned())))
            .collect()
    })
}

fn measured(shares: i64, quota: i64, memory: i64) -> Option<cri::ContainerResources> {
    Some(cri::ContainerResources {
        linux: Some(cri::LinuxContainerResources {
            cpu_period: 100_000,
            cpu_quota: quota,
            cpu_shares: shares,
            memory_limit_in_bytes: memory,
            ..Default::default()
        }),
        windows: None,
    })
}

fn guaranteed(name: &str) -> Container {
    let full = &[("cpu", "100m"), ("memory", "200Mi")];
    resources(name, full, full)
}

#[test]
fn a_running_container_shows_what_the_runtime_applied() {
    let spec = guaranteed("c1");
    let mut latest = running("c1", 0);
    // The cgroup still has the old values (a resize not yet applied): they are shown.
    latest.resources = measured(204, 20_000, 100 << 20);
    let applied = container_applied(&spec, &latest, "containerd://c1-0", None);
    assert_eq!(
        applied.requests,
        list(&[("cpu", "200m"), ("memory", "200Mi")]),
        "the memory request is not measured: the allocation's"
    );
    assert_eq!(
        applied.limits,
        list(&[("cpu", "200m"), ("memory", "100Mi")])
    );
    assert_eq!(
        container_allocated(&spec),
        list(&[("cpu", "100m"), ("memory", "200Mi")])
    );
}

#[test]
fn values_at_the_kernel_minimum_and_stopped_containers_show_the_allocation() {
    let tiny = resources("c", &[("cpu", "1m")], &[("cpu", "5m")]);
    let mut latest = running("c", 0);
    latest.resources = measured(2, 1_000, 0);
    let applied = container_applied(&tiny, &latest, "containerd://c-0", None);
    assert_eq!(applied.requests, list(&[("cpu", "1m")]));
    assert_eq!(applied.limits, list(&[("cpu", "5m")]));
    let mut stopped = exited("c", 0, 0);
    stopped.resources = measured(1024, 100_000, 0);
    let applied = container_applied(&tiny, &stopped, "containerd://c-0", None);
    assert_eq!(applied.requests, list(&[("cpu", "1m")]));
    // Nothing requested or limited: an empty `resources`, no `allocatedResources`.
    let bare = resources("b", &[], &[]);
    let applied = container_applied(&bare, &running("b", 0), "containerd://b-0", None);
    assert_eq!(applied, ResourceRequirements::default());
    assert_eq!(container_allocated(&bare), None);
}

#[test]
fn unreported_values_keep_what_the_same_running_instance_showed() {
    let spec = guaranteed("c1");
    let before = ContainerStatus {
        name: "c1".into(),
        container_id: Some("containerd://c1-0".into()),
        state: Some(ContainerState {
            running: Some(ContainerStateRunning::default()),
            ..Default::default()
        }),
        resources: Some(ResourceRequirements {
            requests: list(&[("cpu", "150m"), ("memory", "150Mi")]),
            limits: list(&[("cpu", "150m"), ("memory", "150Mi")]),
            ..Default::default()
        }),
        ..Default::default()
    };
    let latest = running("c1", 0); // the runtime reports no resources
    let kept = container_applied(&spec, &latest, "containerd://c1-0", Some(&before));
    assert_eq!(kept.limits, list(&[("cpu", "150m"), ("memory", "150Mi")]));
    // The memory request is the allocation's: it sets nothing the runtime could report.
    assert_eq!(kept.requests, list(&[("cpu", "150m"), ("memory", "200Mi")]));
    // A new instance starts from the allocation.
    let fresh = container_applied(&spec, &latest, "containerd://c1-1", Some(&before));
    assert_eq!(fresh.limits, list(&[("cpu", "100m"), ("memory", "200Mi")]));
}

#[test]
fn the_status_has_container_and_pod_resources() {
    let mut pod = pod("Always", vec![], &[]);
    pod.spec.as_mut().unwrap().containers = vec![guaranteed("c1")];
    let pod = with_pod_resources(
        pod,
        &[("cpu", "200m"), ("memory", "400Mi")],
        &[("cpu", "200m"), ("memory", "400Mi")],
    );
    let mut c1 = runtime_container("c1", 0, cri::ContainerState::ContainerRunning, 0);
    c1.resources = measured(102, 10_000, 200 << 20);
    let status: PodStatus = compute(&pod, &observed(vec![c1]), &Knowledge { ..knowledge() });
    let c1 = container_status(&status, "c1");
    assert_eq!(
        c1.allocated_resources,
        list(&[("cpu", "100m"), ("memory", "200Mi")])
    );
    let applied = c1.resources.as_ref().expect("resources");
    assert_eq!(
        applied.limits,
        list(&[("cpu", "100m"), ("memory", "200Mi")])
    );
    assert_eq!(status.qos_class.as_deref(), Some("Guaranteed"));
    assert_eq!(
        status.allocated_resources,
        list(&[("cpu", "200m"), ("memory", "400Mi")])
    );
    let pod_level = status.resources.expect("pod resources");
    assert_eq!(
        pod_level.limits,
        list(&[("cpu", "200m"), ("memory", "400Mi")])
    );

    // With InPlacePodLevelResourcesVerticalScaling off, as upstream: no pod-level figures.
    let gate_off = Knowledge {
        without_pod_level_resources: true,
        ..knowledge()
    };
    let mut c1 = runtime_container("c1", 0, cri::ContainerState::ContainerRunning, 0);
    c1.resources = measured(102, 10_000, 200 << 20);
    let status = compute(&pod, &observed(vec![c1]), &gate_off);
    assert_eq!(
        (&status.allocated_resources, &status.resources),
        (&None, &None)
    );
    assert_eq!(
        container_status(&status, "c1").allocated_resources,
        list(&[("cpu", "100m"), ("memory", "200Mi")]),
        "the containers' stay"
    );
}

#[test]
fn a_running_pod_shows_the_pod_level_resources_in_force_in_its_cgroup() {
    let mut pod = pod("Always", vec![], &[]);
    pod.spec.as_mut().unwrap().containers = vec![guaranteed("c1")];
    let pod = with_pod_resources(
        pod,
        &[("cpu", "200m"), ("memory", "10Ki")],
        &[("cpu", "200m"), ("memory", "10Ki")],
    );
    let c1 = runtime_container("c1", 0, cri::ContainerState::ContainerRunning, 0);
    // A resize to 10Ki not carried out: the cgroup keeps 400Mi, and 300m of cpu.
    let cgroup = PodCgroupResources {
        cpu_shares: 307,
        cpu_quota_us: Some(30_000),
        memory_limit_bytes: Some(400 << 20),
    };
    let mut seen = observed(vec![c1.clone()]);
    seen.pod_cgroup = Some(cgroup);
    let status = compute(&pod, &seen, &knowledge());
    assert_eq!(status.phase.as_deref(), Some("Running"));
    let pod_level = status.resources.expect("pod resources");
    assert_eq!(
        (pod_level.requests, pod_level.limits),
        (
            list(&[("cpu", "300m"), ("memory", "10Ki")]),
            list(&[("cpu", "300m"), ("memory", "400Mi")])
        ),
        "the cgroup's cpu and memory limit; the memory request no cgroup holds is the allocation's"
    );
    assert_eq!(
        status.allocated_resources,
        list(&[("cpu", "200m"), ("memory", "10Ki")])
    );
    let unread = compute(&pod, &observed(vec![c1]), &knowledge());
    assert_eq!(
        unread.resources.and_then(|r| r.limits),
        list(&[("cpu", "200m"), ("memory", "10Ki")]),
        "no cgroup read: the allocation"
    );
}
