//! Tests of the pod-level fields of [`compute`]: rejection, start time, QoS and generation.

use k8s_openapi::api::core::v1::PodStatus;

use crate::status::testing::{at, container, knowledge, observed, pod, running, sidecar};
use crate::status::{compute, Knowledge};

#[test]
fn a_rejected_pod_fails_with_the_reason_and_nothing_else() {
    let mut pod = pod("Always", vec![sidecar("proxy")], &["app"]);
    pod.metadata.generation = Some(2);
    let knowledge = Knowledge {
        rejection: Some(("OutOfcpu".into(), "node lacks 2 cpu".into())),
        start_time: Some(at(900)),
        host_ips: vec!["192.168.1.10".into()],
        ..knowledge()
    };
    let status = compute(&pod, &observed(vec![running("app", 0)]), &knowledge);
    assert_eq!(status.phase.as_deref(), Some("Failed"));
    assert_eq!(status.reason.as_deref(), Some("OutOfcpu"));
    assert_eq!(status.message.as_deref(), Some("node lacks 2 cpu"));
    assert_eq!(status.start_time, Some(at(900)));
    assert_eq!(status.observed_generation, Some(2));
    assert_eq!(status.host_ip.as_deref(), Some("192.168.1.10"));
    assert_eq!(status.container_statuses, None);
    assert_eq!(status.init_container_statuses, None);
    assert_eq!(status.conditions, None);
}

#[test]
fn an_admitted_pod_has_no_reason_or_message() {
    let status = compute(
        &pod("Always", vec![], &["app"]),
        &observed(vec![]),
        &knowledge(),
    );
    assert_eq!((status.reason, status.message), (None, None));
}

#[test]
fn start_time_is_kept_from_the_previous_status_else_the_actors() {
    let mut pod = pod("Always", vec![], &["app"]);
    let knowledge = Knowledge {
        start_time: Some(at(900)),
        ..knowledge()
    };
    let first = compute(&pod, &observed(vec![]), &knowledge);
    assert_eq!(first.start_time, Some(at(900)));
    pod.status = Some(PodStatus {
        start_time: Some(at(300)),
        ..PodStatus::default()
    });
    assert_eq!(
        compute(&pod, &observed(vec![]), &knowledge).start_time,
        Some(at(300))
    );
}

#[test]
fn the_qos_class_is_computed_unless_already_set() {
    let mut pod = pod("Always", vec![], &["app"]);
    let status = compute(&pod, &observed(vec![]), &knowledge());
    assert_eq!(status.qos_class.as_deref(), Some("BestEffort"));
    pod.status = Some(PodStatus {
        qos_class: Some("Burstable".into()),
        ..PodStatus::default()
    });
    let status = compute(&pod, &observed(vec![]), &knowledge());
    assert_eq!(status.qos_class.as_deref(), Some("Burstable"));
}

#[test]
fn observed_generation_is_the_metadata_generation() {
    let mut pod = pod("Always", vec![], &["app"]);
    assert_eq!(
        compute(&pod, &observed(vec![]), &knowledge()).observed_generation,
        None
    );
    pod.metadata.generation = Some(7);
    assert_eq!(
        compute(&pod, &observed(vec![]), &knowledge()).observed_generation,
        Some(7)
    );
}

#[test]
fn a_pod_without_init_containers_has_no_init_statuses() {
    let status = compute(
        &pod("Always", vec![], &["app"]),
        &observed(vec![]),
        &knowledge(),
    );
    assert_eq!(status.init_container_statuses, None);
    let with_init = pod("Always", vec![container("setup")], &["app"]);
    let status = compute(&with_init, &observed(vec![]), &knowledge());
    assert_eq!(status.init_container_statuses.map(|s| s.len()), Some(1));
}

#[test]
fn runtime_containers_of_other_names_are_ignored() {
    let status = compute(
        &pod("Always", vec![], &["app"]),
        &observed(vec![running("stale", 0)]),
        &knowledge(),
    );
    assert_eq!(status.phase.as_deref(), Some("Pending"));
    assert_eq!(status.container_statuses.map(|s| s.len()), Some(1));
}
