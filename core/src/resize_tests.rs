use std::time::{Duration, Instant, UNIX_EPOCH};

use k8s_cri::v1 as cri;
use k8s_openapi::api::core::v1::ContainerResizePolicy;

use super::*;
use crate::backoff::{Backoff, BackoffPolicy};
use crate::hash::container_hash;
use crate::labels;
use crate::plan::{plan, KillReason, PlanInput, ProbeVerdicts};
use crate::testing::{pod_with, resources, with_pod_resources};

const SANDBOX: &str = "sandbox-1";

fn guaranteed(name: &str, cpu: &str, memory: &str) -> Container {
    let full = &[("cpu", cpu), ("memory", memory)];
    resources(name, full, full)
}

fn with_policy(mut container: Container, cpu: &str, memory: &str) -> Container {
    container.resize_policy = Some(vec![
        ContainerResizePolicy {
            resource_name: "cpu".into(),
            restart_policy: cpu.into(),
        },
        ContainerResizePolicy {
            resource_name: "memory".into(),
            restart_policy: memory.into(),
        },
    ]);
    container
}

/// The runtime running the containers of `made_from` with the cgroup values each
/// was made with, as containerd reports them.
fn runtime_of(made_from: &Pod) -> PodRuntime {
    let containers = crate::kind::all_containers(made_from)
        .map(|(c, _)| {
            let linux = container_resources(made_from, "web", &c.name, c, 0).unwrap();
            ObservedContainer {
                sandbox_id: SANDBOX.into(),
                status: cri::ContainerStatus {
                    id: format!("{}-id", c.name),
                    state: cri::ContainerState::ContainerRunning as i32,
                    labels: [(labels::CONTAINER_NAME.to_owned(), c.name.clone())].into(),
                    annotations: [(labels::CONTAINER_HASH.to_owned(), container_hash(c))].into(),
                    resources: Some(cri::ContainerResources {
                        linux: Some(linux),
                        windows: None,
                    }),
                    ..Default::default()
                },
            }
        })
        .collect();
    PodRuntime {
        sandboxes: vec![cri::PodSandbox {
            id: SANDBOX.into(),
            state: cri::PodSandboxState::SandboxReady as i32,
            ..Default::default()
        }],
        sandbox_status: Some(cri::PodSandboxStatus {
            id: SANDBOX.into(),
            state: cri::PodSandboxState::SandboxReady as i32,
            network: Some(cri::PodSandboxNetworkStatus {
                ip: "10.0.0.2".into(),
                ..Default::default()
            }),
            ..Default::default()
        }),
        containers,
    }
}

fn kills(pod: &Pod, runtime: &PodRuntime) -> Vec<(String, KillReason, String)> {
    let actions = plan(&PlanInput {
        pod,
        runtime,
        restarts: &Backoff::default(),
        policy: BackoffPolicy {
            initial: Duration::from_secs(10),
            max: Duration::from_secs(300),
        },
        probes: &ProbeVerdicts::default(),
        now: Instant::now(),
        wall_clock: UNIX_EPOCH + Duration::from_secs(1_000),
        gates: crate::restart::RestartGates::default(),
    });
    actions
        .kill
        .iter()
        .map(|k| (k.name.clone(), k.reason, k.message.clone()))
        .collect()
}

#[test]
fn an_unchanged_pod_needs_nothing() {
    let pod = pod_with(vec![guaranteed("c1", "100m", "200Mi")], vec![]);
    let runtime = runtime_of(&pod);
    assert!(plan_resize(&pod, &runtime, SANDBOX, None, 0).is_empty());
    assert!(kills(&pod, &runtime).is_empty());
}

#[test]
fn a_resize_with_not_required_updates_in_place_and_keeps_the_container() {
    let before = pod_with(
        vec![with_policy(
            guaranteed("c1", "100m", "200Mi"),
            "NotRequired",
            "NotRequired",
        )],
        vec![],
    );
    let after = pod_with(
        vec![with_policy(
            guaranteed("c1", "200m", "200Mi"),
            "NotRequired",
            "NotRequired",
        )],
        vec![],
    );
    let runtime = runtime_of(&before);
    assert!(
        kills(&after, &runtime).is_empty(),
        "no restart for a resize"
    );
    let actions = plan_resize(&after, &runtime, SANDBOX, None, 16 << 30);
    assert_eq!(actions.updates.len(), 1);
    let update = &actions.updates[0];
    assert_eq!((update.id.as_str(), update.name.as_str()), ("c1-id", "c1"));
    assert_eq!(
        (update.resources.cpu_shares, update.resources.cpu_quota),
        (204, 20_000)
    );
    assert_eq!(update.resources.memory_limit_in_bytes, 200 << 20);
    assert_eq!(update.resources.oom_score_adj, -997);
}

#[test]
fn restart_container_restarts_only_for_the_resource_it_names() {
    let spec = |cpu: &str, memory: &str| {
        pod_with(
            vec![with_policy(
                guaranteed("c1", cpu, memory),
                "NotRequired",
                "RestartContainer",
            )],
            vec![],
        )
    };
    let before = spec("100m", "200Mi");
    // cpu changed: its policy is NotRequired, an update.
    let cpu_only = spec("300m", "200Mi");
    let runtime = runtime_of(&before);
    assert!(kills(&cpu_only, &runtime).is_empty());
    assert_eq!(
        plan_resize(&cpu_only, &runtime, SANDBOX, None, 0)
            .updates
            .len(),
        1
    );
    // memory changed: RestartContainer, a kill (and a start) in the plan, no update.
    let memory = spec("100m", "300Mi");
    let runtime = runtime_of(&before);
    assert_eq!(
        kills(&memory, &runtime),
        vec![(
            "c1".to_owned(),
            KillReason::Resize,
            "Container c1 resize requires restart".to_owned()
        )]
    );
    assert!(plan_resize(&memory, &runtime, SANDBOX, None, 0).is_empty());
}

#[test]
fn sidecars_follow_their_resize_policy_too() {
    let mut sidecar = with_policy(
        guaranteed("s", "100m", "100Mi"),
        "RestartContainer",
        "NotRequired",
    );
    sidecar.restart_policy = Some("Always".into());
    let before = pod_with(
        vec![guaranteed("c1", "100m", "100Mi")],
        vec![sidecar.clone()],
    );
    let mut grown = sidecar;
    grown.resources = guaranteed("s", "200m", "100Mi").resources;
    let after = pod_with(vec![guaranteed("c1", "100m", "100Mi")], vec![grown]);
    let runtime = runtime_of(&before);
    let killed = kills(&after, &runtime);
    assert_eq!(killed.len(), 1);
    assert_eq!(
        (killed[0].0.as_str(), killed[0].1),
        ("s", KillReason::Resize)
    );
}

#[test]
fn the_pod_cgroup_is_raised_first_and_lowered_last() {
    let pod = |cpu: &str, memory: &str| {
        with_pod_resources(
            pod_with(vec![resources("c1", &[], &[])], vec![]),
            &[("cpu", cpu), ("memory", memory)],
            &[("cpu", cpu), ("memory", memory)],
        )
    };
    let before = pod("200m", "200Mi");
    let after = pod("400m", "100Mi");
    let runtime = runtime_of(&before);
    let now = pod_cgroup_resources(&before);
    let actions = plan_resize(&after, &runtime, SANDBOX, Some(&now), 0);
    // The bare container follows the pod-level limits: updated in place.
    assert_eq!(actions.updates.len(), 1);
    assert_eq!(actions.updates[0].resources.cpu_quota, 40_000);
    assert_eq!(
        actions.updates[0].resources.memory_limit_in_bytes,
        100 << 20
    );
    let first = actions.pod_cgroup_first.expect("first");
    assert_eq!(
        (first.cpu_quota_us, first.memory_limit_bytes),
        (Some(40_000), Some(200 << 20)),
        "raised where it grows, kept where it shrinks"
    );
    let last = actions.pod_cgroup_last.expect("last");
    assert_eq!(
        (last.cpu_quota_us, last.memory_limit_bytes),
        (Some(40_000), Some(100 << 20))
    );
    // Nothing to do once the pod cgroup holds what is wanted.
    let runtime = runtime_of(&after);
    assert!(plan_resize(&after, &runtime, SANDBOX, Some(&last), 0).is_empty());
}

/// The runtime of `runtime_of(made_from)`, each container recording the memory request it
/// was made with, as `core::spec` writes it on every container it makes.
fn runtime_recording_requests(made_from: &Pod) -> PodRuntime {
    let mut runtime = runtime_of(made_from);
    for (observed, (container, _)) in runtime
        .containers
        .iter_mut()
        .zip(crate::kind::all_containers(made_from))
    {
        observed.status.annotations.insert(
            labels::CONTAINER_MEMORY_REQUEST.to_owned(),
            memory_request_bytes(container).to_string(),
        );
    }
    runtime
}

#[test]
fn a_memory_request_change_restarts_only_under_restart_container() {
    let limits = &[("cpu", "100m"), ("memory", "300Mi")];
    let spec = |request: &str, memory_policy: &str| {
        let container = resources("c1", &[("cpu", "50m"), ("memory", request)], limits);
        pod_with(
            vec![with_policy(container, "NotRequired", memory_policy)],
            vec![],
        )
    };
    // The request is in no cgroup: only the container's record of it shows the change.
    let restart = spec("40Mi", "RestartContainer");
    let runtime = runtime_recording_requests(&spec("35Mi", "RestartContainer"));
    assert_eq!(
        kills(&restart, &runtime),
        vec![(
            "c1".to_owned(),
            KillReason::Resize,
            "Container c1 resize requires restart".to_owned()
        )]
    );
    // Made with the request it asks for: nothing to do.
    let same = runtime_recording_requests(&restart);
    assert!(kills(&restart, &same).is_empty());
    // NotRequired: no restart for a request.
    let in_place = spec("40Mi", "NotRequired");
    let runtime = runtime_recording_requests(&spec("35Mi", "NotRequired"));
    assert!(kills(&in_place, &runtime).is_empty());
    // A container that does not say what it was made with gives no ground for a restart.
    assert!(kills(&restart, &runtime_of(&spec("35Mi", "RestartContainer"))).is_empty());
}
