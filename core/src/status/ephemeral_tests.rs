//! Tests of `ephemeralContainerStatuses`: an ephemeral container's state, image and IDs as any
//! container's, never ready, never counted for the pod's readiness or phase.

use k8s_openapi::api::core::v1::{EphemeralContainer, Pod, PodStatus};

use crate::status::testing::{exited, knowledge, observed, pod, running};
use crate::status::{compute, Waiting};

/// A Never pod running `app`, with the ephemeral container `debug` added.
fn debugged() -> Pod {
    let mut pod = pod("Never", vec![], &["app"]);
    pod.spec.as_mut().unwrap().ephemeral_containers = Some(vec![EphemeralContainer {
        name: "debug".into(),
        image: Some("shell:1".into()),
        target_container_name: Some("app".into()),
        ..EphemeralContainer::default()
    }]);
    pod
}

fn condition<'a>(status: &'a PodStatus, kind: &str) -> &'a str {
    let conditions = status.conditions.iter().flatten();
    let found = conditions.into_iter().find(|c| c.type_ == kind);
    found.map_or("", |c| c.status.as_str())
}

#[test]
fn a_running_ephemeral_container_is_reported_apart_and_never_ready() {
    let observed = observed(vec![running("app", 0), running("debug", 0)]);
    let status = compute(&debugged(), &observed, &knowledge());
    let statuses = status.ephemeral_container_statuses.as_deref().unwrap();
    assert_eq!(statuses.len(), 1);
    let debug = &statuses[0];
    assert_eq!(debug.name, "debug");
    assert_eq!(debug.image, "shell:1");
    assert_eq!(debug.image_id, "docker.io/library/debug@sha256:0");
    assert_eq!(debug.container_id.as_deref(), Some("containerd://debug-0"));
    assert!(debug.state.as_ref().unwrap().running.is_some());
    assert!(!debug.ready);
    assert_eq!(debug.started, None, "nothing probes it");
    assert_eq!(debug.restart_count, 0);
    let regular = status.container_statuses.as_deref().unwrap();
    assert_eq!(regular.len(), 1, "not among the regular containers");
    assert_eq!(
        condition(&status, "Ready"),
        "True",
        "it does not hold readiness"
    );
    assert_eq!(status.phase.as_deref(), Some("Running"));
}

#[test]
fn an_exited_or_waiting_ephemeral_container_leaves_the_phase_alone() {
    let done = observed(vec![running("app", 0), exited("debug", 0, 1)]);
    let status = compute(&debugged(), &done, &knowledge());
    let debug = &status.ephemeral_container_statuses.as_deref().unwrap()[0];
    let terminated = debug.state.as_ref().unwrap().terminated.as_ref().unwrap();
    assert_eq!(terminated.exit_code, 1);
    assert_eq!(status.phase.as_deref(), Some("Running"));
    assert_eq!(condition(&status, "Ready"), "True");

    let mut known = knowledge();
    known.waiting.insert(
        "debug".into(),
        Waiting {
            reason: "ErrImagePull".into(),
            message: "no such image".into(),
        },
    );
    let pulling = compute(&debugged(), &observed(vec![running("app", 0)]), &known);
    let debug = &pulling.ephemeral_container_statuses.as_deref().unwrap()[0];
    let waiting = debug.state.as_ref().unwrap().waiting.as_ref().unwrap();
    assert_eq!(waiting.reason.as_deref(), Some("ErrImagePull"));
    assert_eq!(pulling.phase.as_deref(), Some("Running"));

    let app_done = observed(vec![exited("app", 0, 0), running("debug", 0)]);
    let status = compute(&debugged(), &app_done, &knowledge());
    assert_eq!(
        status.phase.as_deref(),
        Some("Succeeded"),
        "a running debugger does not keep the pod's phase alive"
    );
}

#[test]
fn a_pod_without_ephemeral_containers_reports_no_list() {
    let status = compute(
        &pod("Always", vec![], &["app"]),
        &observed(vec![running("app", 0)]),
        &knowledge(),
    );
    assert_eq!(status.ephemeral_container_statuses, None);
}
