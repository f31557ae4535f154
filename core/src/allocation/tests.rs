//! Table tests of resize admission, written from upstream's allocation manager behaviour:
//! what is allocated, deferred or infeasible, with upstream's messages; the allocation view;
//! the retry order; the pending condition's bookkeeping; the event messages.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

use super::*;
use crate::admission::Capacity;
use crate::context::NodeOs;
use crate::eviction::signals::Pressure;

/// Upstream's test node: 4 cpus, 4 GiB.
const NODE: Capacity = Capacity {
    pods: 110,
    cpu_millis: 4000,
    memory_bytes: 4 << 30,
    ephemeral_storage_bytes: None,
};

/// A pod `name` whose one container `c1` requests `cpu` and `memory`.
fn pod(name: &str, cpu: &str, memory: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "uid": name, "generation": 2},
        "spec": {"containers": [{"name": "c1", "image": "i",
            "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    }))
    .expect("a pod")
}

/// The decision on `desired`, which was allocated 1 cpu and 1 GiB, on a node whose
/// `InPlacePodLevelResourcesVerticalScaling` gate is on.
fn decide_on(desired: &Pod, others: &[&Pod], pressure: &[Pressure], os: NodeOs) -> Decision {
    let pressure: BTreeSet<Pressure> = pressure.iter().copied().collect();
    decide(&ResizeCheck {
        desired,
        allocated: &pod("pod1", "1", "1Gi"),
        others,
        capacity: NODE,
        pressure: &pressure,
        os,
        pod_level_resizes: true,
    })
}

/// `pod` with pod-level requests of `cpu`.
fn with_pod_cpu(mut pod: Pod, cpu: &str) -> Pod {
    if let Some(spec) = pod.spec.as_mut() {
        spec.resources = serde_json::from_value(json!({"requests": {"cpu": cpu}})).ok();
    }
    pod
}

/// One resize of the table: what it is, the cpu and memory asked for, the node's pressure and
/// operating system, the decision.
type Case<'a> = (&'a str, [&'a str; 2], &'a [Pressure], NodeOs, Decision);

#[test]
fn resizes_are_allocated_deferred_or_infeasible_as_upstream_decides() {
    // Two other pods hold 1 cpu and 1 GiB each, as in upstream's tests.
    let others = [pod("pod2", "1", "1Gi"), pod("pod3", "1", "1Gi")];
    let others: Vec<&Pod> = others.iter().collect();
    let short = |resource: &str, requested: &str, used: &str, capacity: &str| Decision::Deferred {
        message: format!(
            "Node didn't have enough resource: {resource}, requested: {requested}, used: \
                 {used}, capacity: {capacity}"
        ),
    };
    let linux = NodeOs::Linux;
    let cases: [Case; 8] = [
        (
            "less of both",
            ["500m", "500Mi"],
            &[],
            linux,
            Decision::Allocate,
        ),
        (
            "more cpu, less memory",
            ["1500m", "500Mi"],
            &[],
            linux,
            Decision::Allocate,
        ),
        (
            "cpu up to what is free",
            ["2", "1Gi"],
            &[],
            linux,
            Decision::Allocate,
        ),
        (
            "cpu past what is free: millicores, no unit",
            ["2500m", "1Gi"],
            &[],
            linux,
            short("cpu", "2500", "2000", "4000"),
        ),
        (
            "memory past the node's capacity: deferred too",
            ["1", "4500Mi"],
            &[],
            linux,
            short("memory", "4718592000", "2147483648", "4294967296"),
        ),
        (
            "cpu past the node's capacity",
            ["5", "1Gi"],
            &[],
            linux,
            short("cpu", "5000", "2000", "4000"),
        ),
        (
            "disk pressure refuses every pod: deferred",
            ["500m", "500Mi"],
            &[Pressure::Disk],
            linux,
            Decision::Deferred {
                message: "The node had condition: [DiskPressure]. ".to_owned(),
            },
        ),
        (
            "a Windows node cannot resize in place",
            ["500m", "500Mi"],
            &[],
            NodeOs::Windows,
            Decision::Infeasible {
                message: "In-place pod resize is not supported on Windows".to_owned(),
                detail: "windows",
            },
        ),
    ];
    for (what, [cpu, memory], pressure, os, want) in cases {
        let desired = pod("pod1", cpu, memory);
        assert_eq!(decide_on(&desired, &others, pressure, os), want, "{what}");
    }
}

#[test]
fn memory_pressure_alone_defers_no_burstable_resize() {
    let desired = pod("pod1", "1", "2Gi");
    assert_eq!(
        decide_on(&desired, &[], &[Pressure::Memory], NodeOs::Linux),
        Decision::Allocate
    );
}

#[test]
fn pod_level_requests_are_what_a_pod_level_resize_asks_for() {
    let desired = with_pod_cpu(pod("pod1", "100m", "64Mi"), "3500m");
    let other = pod("pod2", "1", "1Gi");
    assert_eq!(
        decide_on(&desired, &[&other], &[], NodeOs::Linux),
        Decision::Deferred {
            message:
                "Node didn't have enough resource: cpu, requested: 3500, used: 1000, capacity: 4000"
                    .to_owned()
        }
    );
}

/// With the `InPlacePodLevelResourcesVerticalScaling` gate off, a resize that changes the
/// pod-level resources is infeasible in upstream's words, whatever its containers ask; one of
/// the containers alone is decided as with the gate on; a Windows node says its own first.
#[test]
fn with_the_gate_off_a_pod_level_resize_is_infeasible() {
    let allocated = with_pod_cpu(pod("pod1", "500m", "512Mi"), "1");
    let decide_with = |desired: &Pod, gate: bool, os: NodeOs| {
        decide(&ResizeCheck {
            desired,
            allocated: &allocated,
            others: &[],
            capacity: NODE,
            pressure: &BTreeSet::new(),
            os,
            pod_level_resizes: gate,
        })
    };
    let pod_level = with_pod_cpu(pod("pod1", "500m", "512Mi"), "2");
    let containers = with_pod_cpu(pod("pod1", "600m", "512Mi"), "1");
    let both = with_pod_cpu(pod("pod1", "600m", "512Mi"), "2");
    let infeasible = Decision::Infeasible {
        message: "InPlacePodLevelResourcesVerticalScaling is disabled".to_owned(),
        detail: "plr_feature_gate_off",
    };
    let linux = NodeOs::Linux;
    assert_eq!(decide_with(&pod_level, false, linux), infeasible);
    assert_eq!(decide_with(&both, false, linux), infeasible);
    assert_eq!(decide_with(&containers, false, linux), Decision::Allocate);
    assert_eq!(decide_with(&pod_level, true, linux), Decision::Allocate);
    assert_eq!(decide_with(&both, true, linux), Decision::Allocate);
    assert!(matches!(
        decide_with(&pod_level, false, NodeOs::Windows),
        Decision::Infeasible {
            detail: "windows",
            ..
        }
    ));
}

#[test]
fn a_resize_is_a_change_of_amounts_not_of_their_spelling() {
    let given = pod("p", "1", "1Gi");
    assert!(!resize_requested(&given, &pod("p", "1000m", "1024Mi")));
    assert!(resize_requested(&given, &pod("p", "1001m", "1Gi")));
    // An empty list is no list.
    let mut empty = pod("p", "1", "1Gi");
    let mut none = empty.clone();
    empty.spec.as_mut().unwrap().containers[0]
        .resources
        .as_mut()
        .unwrap()
        .limits = Some(Default::default());
    none.spec.as_mut().unwrap().containers[0]
        .resources
        .as_mut()
        .unwrap()
        .limits = None;
    assert!(!resize_requested(&empty, &none));
}

/// A pod with a sidecar `side` requesting `side_cpu` and pod-level requests of `pod_cpu`.
fn with_sidecar(side_cpu: &str, pod_cpu: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": "p", "generation": 3, "labels": {"v": pod_cpu}},
        "spec": {
            "resources": {"requests": {"cpu": pod_cpu}},
            "initContainers": [{"name": "side", "image": "i", "restartPolicy": "Always",
                "resources": {"requests": {"cpu": side_cpu}}}],
            "containers": [{"name": "c1", "image": "i:2"}]
        }
    }))
    .expect("a pod")
}

#[test]
fn sidecars_and_pod_level_resources_are_resized_too() {
    let given = with_sidecar("100m", "1");
    assert!(resize_requested(&given, &with_sidecar("200m", "1")));
    assert!(resize_requested(&given, &with_sidecar("100m", "2")));
    assert!(!resize_requested(&given, &with_sidecar("100m", "1")));
}

#[test]
fn the_allocated_pod_is_the_desired_one_with_the_allocated_resources() {
    let given = with_sidecar("100m", "1");
    let desired = with_sidecar("200m", "2");
    let running = with_allocation(&desired, &given);
    assert_eq!(running.metadata, desired.metadata, "the desired metadata");
    let (spec, given_spec) = (running.spec.unwrap(), given.spec.unwrap());
    assert_eq!(spec.resources, given_spec.resources);
    assert_eq!(spec.init_containers, given_spec.init_containers);
    assert_eq!(spec.containers, given_spec.containers);
    assert!(!resize_requested(
        &with_allocation(&desired, &desired),
        &desired
    ));
}

#[test]
fn pending_resizes_are_tried_in_upstreams_order() {
    let now = Instant::now();
    let key = |increasing, priority, guaranteed, waited: Option<u64>| RetryKey {
        increasing,
        priority,
        guaranteed,
        pending_since: waited.map(|s| now - Duration::from_secs(s)),
    };
    let mut keys = [
        key(true, 0, false, None),
        key(true, 0, false, Some(10)),
        key(true, 0, false, Some(60)),
        key(true, 0, true, Some(1)),
        key(true, 100, false, None),
        key(false, -5, false, None),
    ];
    keys.sort_by(retry_order);
    assert_eq!(
        keys,
        [
            key(false, -5, false, None),
            key(true, 100, false, None),
            key(true, 0, true, Some(1)),
            key(true, 0, false, Some(60)),
            key(true, 0, false, Some(10)),
            key(true, 0, false, None),
        ],
        "shrinking first, then priority, Guaranteed, the longest pending"
    );
}

#[test]
fn a_retry_key_says_whether_the_resize_asks_for_more() {
    let given = pod("p", "1", "1Gi");
    assert!(!RetryKey::of(&given, &pod("p", "500m", "1Gi"), None).increasing);
    assert!(RetryKey::of(&given, &pod("p", "500m", "2Gi"), None).increasing);
    assert!(RetryKey::of(&given, &pod("p", "2", "512Mi"), None).increasing);
}

#[test]
fn a_pending_resize_keeps_its_time_while_its_reason_stays() {
    let then = Instant::now();
    let later = then + Duration::from_secs(5);
    let first = PendingResize::after(None, PendingReason::Deferred, "a".into(), Some(2), then);
    assert!(first.is_news(None));
    let again = PendingResize::after(
        Some(&first),
        PendingReason::Deferred,
        "b".into(),
        Some(2),
        later,
    );
    assert_eq!(again.since, then);
    assert!(!again.is_news(Some(&first)), "only the message changed");
    assert!(again.shows_otherwise(Some(&first)));
    let newer = PendingResize::after(
        Some(&again),
        PendingReason::Deferred,
        "b".into(),
        Some(3),
        later,
    );
    assert!(newer.is_news(Some(&again)), "another generation");
    let infeasible = PendingResize::after(
        Some(&newer),
        PendingReason::Infeasible,
        "b".into(),
        Some(3),
        later,
    );
    assert_eq!(infeasible.since, later, "another reason");
    assert!(infeasible.is_news(Some(&newer)));
}

#[test]
fn events_carry_upstreams_resource_summary() {
    let desired = with_sidecar("200m", "2");
    let pending = PendingResize::after(
        None,
        PendingReason::Deferred,
        "Node didn't have enough resource: cpu".into(),
        Some(3),
        Instant::now(),
    );
    assert_eq!(
        pending_event(&desired, &pending),
        "Pod resize Deferred: {\"initContainers\":[{\"name\":\"side\",\"resources\":\
         {\"requests\":{\"cpu\":\"200m\"}}}],\"containers\":[{\"name\":\"c1\",\"resources\":{}}],\
         \"generation\":3,\"error\":\"Node didn't have enough resource: cpu\"}"
    );
    assert_eq!(
        error_event(&pod("p", "2", "1Gi"), "no"),
        "Pod resize error: {\"containers\":[{\"name\":\"c1\",\"resources\":\
         {\"requests\":{\"cpu\":\"2\",\"memory\":\"1Gi\"}}}],\"generation\":2,\"error\":\"no\"}"
    );
    let grown = pod("p", "2", "1Gi");
    assert_eq!(
        started_event(&grown),
        "Pod resize started: {\"containers\":[{\"name\":\"c1\",\"resources\":\
         {\"requests\":{\"cpu\":\"2\",\"memory\":\"1Gi\"}}}],\"generation\":2}"
    );
}

#[test]
fn a_checkpoint_gives_a_pod_back_its_allocation_after_a_restart() {
    let given = with_sidecar("100m", "1");
    let checkpoint = Allocations::of([("p", &given)])
        .to_bytes()
        .expect("written");
    let read = Allocations::parse(&checkpoint).expect("read back");
    assert_eq!(read, Allocations::of([("p", &given)]));
    let desired = with_sidecar("200m", "2");
    let admitted = read.apply("p", &desired).expect("p has an allocation");
    assert_eq!(admitted, with_allocation(&desired, &given));
    assert!(!resize_requested(&given, &admitted));
    assert!(
        resize_requested(&admitted, &desired),
        "the resize still waits"
    );
    assert_eq!(read.apply("other", &desired), None, "a pod never allocated");
    assert!(Allocations::parse(b"{\"p\": 3}").is_err());
}
