//! Tests of container statuses: states, restart history, readiness and identity.

use k8s_cri::v1 as cri;
use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateTerminated, ContainerStatus, Probe,
};

use crate::status::testing::{
    at, container, container_status, exited, knowledge, observed, pod, running, runtime_container,
    sidecar,
};
use crate::status::{compute, Knowledge, Waiting};

fn waiting(knowledge: &mut Knowledge, name: &str, reason: &str, message: &str) {
    knowledge.waiting.insert(
        name.into(),
        Waiting {
            reason: reason.into(),
            message: message.into(),
        },
    );
}

fn reason_waiting(status: &ContainerStatus) -> Option<&str> {
    status.state.as_ref()?.waiting.as_ref()?.reason.as_deref()
}

fn terminated(state: Option<&ContainerState>) -> Option<&ContainerStateTerminated> {
    state?.terminated.as_ref()
}

#[test]
fn a_container_without_runtime_record_waits_as_container_creating() {
    let status = compute(
        &pod("Always", vec![], &["app"]),
        &observed(vec![]),
        &knowledge(),
    );
    let app = container_status(&status, "app");
    assert_eq!(reason_waiting(app), Some("ContainerCreating"));
    assert_eq!(app.restart_count, 0);
    assert!(!app.ready);
    assert_eq!(app.started, Some(false));
    assert_eq!(app.image, "app:1");
    assert_eq!(app.last_state, Some(ContainerState::default()));
    assert_eq!(app.container_id, None);
}

#[test]
fn regular_containers_wait_as_pod_initializing_until_init_is_done() {
    let pod = pod("Always", vec![container("init")], &["app"]);
    let status = compute(&pod, &observed(vec![running("init", 0)]), &knowledge());
    assert_eq!(
        reason_waiting(container_status(&status, "app")),
        Some("PodInitializing")
    );
    let status = compute(&pod, &observed(vec![exited("init", 0, 0)]), &knowledge());
    assert_eq!(
        reason_waiting(container_status(&status, "app")),
        Some("ContainerCreating")
    );
}

#[test]
fn the_actors_waiting_reason_and_message_are_shown() {
    let mut knowledge = knowledge();
    waiting(&mut knowledge, "app", "ErrImagePull", "no such image");
    let status = compute(
        &pod("Always", vec![], &["app"]),
        &observed(vec![]),
        &knowledge,
    );
    let state = container_status(&status, "app")
        .state
        .clone()
        .unwrap_or_default();
    let waiting = state.waiting.unwrap_or_default();
    assert_eq!(waiting.reason.as_deref(), Some("ErrImagePull"));
    assert_eq!(waiting.message.as_deref(), Some("no such image"));
}

#[test]
fn a_running_container_shows_its_start_and_identity() {
    let status = compute(
        &pod("Always", vec![], &["app"]),
        &observed(vec![running("app", 0)]),
        &knowledge(),
    );
    let app = container_status(&status, "app");
    let running = app.state.as_ref().and_then(|s| s.running.as_ref());
    assert_eq!(running.and_then(|r| r.started_at.clone()), Some(at(101)));
    assert_eq!(app.container_id.as_deref(), Some("containerd://app-0"));
    assert_eq!(app.image_id, "docker.io/library/app@sha256:0");
    assert_eq!(app.image, "app:1");
    assert!(app.ready);
    assert_eq!(app.started, Some(true));
}

#[test]
fn the_container_id_scheme_is_the_runtime_name() {
    let mut observed = observed(vec![running("app", 0)]);
    observed.runtime_name = "cri-o".into();
    let status = compute(&pod("Always", vec![], &["app"]), &observed, &knowledge());
    let app = container_status(&status, "app");
    assert_eq!(app.container_id.as_deref(), Some("cri-o://app-0"));
}

#[test]
fn a_created_container_waits_as_container_creating() {
    let created = runtime_container("app", 0, cri::ContainerState::ContainerCreated, 0);
    let status = compute(
        &pod("Always", vec![], &["app"]),
        &observed(vec![created]),
        &knowledge(),
    );
    let app = container_status(&status, "app");
    assert_eq!(reason_waiting(app), Some("ContainerCreating"));
    assert_eq!(app.container_id.as_deref(), Some("containerd://app-0"));
}

#[test]
fn a_terminated_container_shows_its_exit_and_termination_message() {
    let mut oom = exited("app", 0, 137);
    oom.reason = "OOMKilled".into();
    oom.message = "memory limit".into();
    let mut knowledge = knowledge();
    knowledge
        .termination_messages
        .insert("app".into(), "out of memory in worker".into());
    let status = compute(
        &pod("Never", vec![], &["app"]),
        &observed(vec![oom]),
        &knowledge,
    );
    let app = container_status(&status, "app");
    let done = terminated(app.state.as_ref()).cloned().unwrap_or_default();
    assert_eq!(done.exit_code, 137);
    assert_eq!(done.reason.as_deref(), Some("OOMKilled"));
    assert_eq!(
        done.message.as_deref(),
        Some("memory limit: out of memory in worker")
    );
    assert_eq!(done.started_at, Some(at(101)));
    assert_eq!(done.finished_at, Some(at(105)));
    assert_eq!(done.container_id.as_deref(), Some("containerd://app-0"));
    assert_eq!(done.signal, None);
    assert!(!app.ready);
    assert_eq!(app.started, Some(false));
}

#[test]
fn an_exit_without_runtime_reason_reads_completed_or_error() {
    let mut ok = exited("a", 0, 0);
    ok.reason.clear();
    let mut bad = exited("b", 0, 3);
    bad.reason.clear();
    let status = compute(
        &pod("Never", vec![], &["a", "b"]),
        &observed(vec![ok, bad]),
        &knowledge(),
    );
    let reason = |name| {
        terminated(container_status(&status, name).state.as_ref())?
            .reason
            .clone()
    };
    assert_eq!(reason("a").as_deref(), Some("Completed"));
    assert_eq!(reason("b").as_deref(), Some("Error"));
}

#[test]
fn the_latest_attempt_gives_restart_count_and_the_one_before_last_state() {
    let containers = vec![exited("app", 0, 2), exited("app", 1, 1), running("app", 2)];
    let status = compute(
        &pod("Always", vec![], &["app"]),
        &observed(containers),
        &knowledge(),
    );
    let app = container_status(&status, "app");
    assert_eq!(app.restart_count, 2);
    assert!(app.state.as_ref().is_some_and(|s| s.running.is_some()));
    let last = terminated(app.last_state.as_ref())
        .cloned()
        .unwrap_or_default();
    assert_eq!(last.exit_code, 1);
    assert_eq!(last.container_id.as_deref(), Some("containerd://app-1"));
}

#[test]
fn crash_loop_backoff_waits_with_the_crashed_attempt_as_last_state() {
    let mut knowledge = knowledge();
    waiting(&mut knowledge, "app", "CrashLoopBackOff", "back-off 40s");
    knowledge
        .termination_messages
        .insert("app".into(), "panic: boom".into());
    let containers = vec![exited("app", 2, 1), exited("app", 3, 2)];
    let status = compute(
        &pod("Always", vec![], &["app"]),
        &observed(containers),
        &knowledge,
    );
    let app = container_status(&status, "app");
    assert_eq!(reason_waiting(app), Some("CrashLoopBackOff"));
    assert_eq!(app.restart_count, 3);
    let last = terminated(app.last_state.as_ref())
        .cloned()
        .unwrap_or_default();
    assert_eq!(last.exit_code, 2);
    assert_eq!(last.message.as_deref(), Some("panic: boom"));
    assert_eq!(app.container_id.as_deref(), Some("containerd://app-3"));
}

#[test]
fn the_termination_message_follows_the_newest_terminated_attempt() {
    let mut knowledge = knowledge();
    knowledge
        .termination_messages
        .insert("app".into(), "bye".into());
    let containers = vec![exited("app", 0, 1), running("app", 1)];
    let status = compute(
        &pod("Always", vec![], &["app"]),
        &observed(containers),
        &knowledge,
    );
    let app = container_status(&status, "app");
    let last = terminated(app.last_state.as_ref())
        .cloned()
        .unwrap_or_default();
    assert_eq!(last.message.as_deref(), Some("bye"));
}

#[test]
fn a_waiting_reason_is_ignored_while_the_container_runs() {
    let mut knowledge = knowledge();
    waiting(&mut knowledge, "app", "CrashLoopBackOff", "");
    let status = compute(
        &pod("Always", vec![], &["app"]),
        &observed(vec![running("app", 1)]),
        &knowledge,
    );
    let app = container_status(&status, "app");
    assert!(app.state.as_ref().is_some_and(|s| s.running.is_some()));
}

#[test]
fn readiness_follows_probe_results() {
    let mut pod = pod("Always", vec![], &["probed", "plain"]);
    if let Some(spec) = pod.spec.as_mut() {
        spec.containers[0].readiness_probe = Some(Probe::default());
    }
    let observed = observed(vec![running("probed", 0), running("plain", 0)]);
    let mut knowledge = knowledge();
    let status = compute(&pod, &observed, &knowledge);
    assert!(!container_status(&status, "probed").ready, "no result yet");
    assert!(container_status(&status, "plain").ready, "no probe");
    knowledge.ready.insert("probed".into(), true);
    let status = compute(&pod, &observed, &knowledge);
    assert!(container_status(&status, "probed").ready);
    knowledge.ready.insert("plain".into(), false);
    let status = compute(&pod, &observed, &knowledge);
    assert!(!container_status(&status, "plain").ready);
}

#[test]
fn a_container_is_not_started_nor_ready_until_its_startup_probe_passes() {
    let mut pod = pod("Always", vec![], &["app"]);
    if let Some(spec) = pod.spec.as_mut() {
        spec.containers[0].startup_probe = Some(Probe::default());
    }
    let observed = observed(vec![running("app", 0)]);
    let mut knowledge = knowledge();
    let status = compute(&pod, &observed, &knowledge);
    let app = container_status(&status, "app");
    assert_eq!((app.started, app.ready), (Some(false), false));
    knowledge.started.insert("app".into(), true);
    let status = compute(&pod, &observed, &knowledge);
    let app = container_status(&status, "app");
    assert_eq!((app.started, app.ready), (Some(true), true));
}

#[test]
fn init_statuses_keep_spec_order_and_hold_sidecars() {
    let pod = pod(
        "Always",
        vec![container("setup"), sidecar("proxy"), container("migrate")],
        &["app"],
    );
    let containers = vec![
        running("app", 0),
        exited("migrate", 0, 0),
        running("proxy", 0),
        exited("setup", 0, 0),
    ];
    let status = compute(&pod, &observed(containers), &knowledge());
    let names = |list: &Option<Vec<ContainerStatus>>| -> Vec<String> {
        list.iter().flatten().map(|c| c.name.clone()).collect()
    };
    assert_eq!(
        names(&status.init_container_statuses),
        ["setup", "proxy", "migrate"]
    );
    assert_eq!(names(&status.container_statuses), ["app"]);
}

#[test]
fn a_completed_init_container_is_ready_and_a_sidecar_is_ready_while_running() {
    let pod = pod(
        "Always",
        vec![container("setup"), sidecar("proxy")],
        &["app"],
    );
    let containers = vec![exited("setup", 0, 0), running("proxy", 0)];
    let status = compute(&pod, &observed(containers), &knowledge());
    let setup = container_status(&status, "setup");
    assert!(setup.ready);
    assert_eq!(setup.started, Some(false));
    assert!(container_status(&status, "proxy").ready);
}

#[test]
fn a_container_the_runtime_forgot_keeps_its_previous_terminated_state() {
    let mut pod = pod("Always", vec![container("setup")], &["app"]);
    let previous = compute(
        &pod,
        &observed(vec![exited("setup", 0, 0), running("app", 0)]),
        &knowledge(),
    );
    pod.status = Some(previous);
    let status = compute(&pod, &observed(vec![running("app", 0)]), &knowledge());
    let setup = container_status(&status, "setup");
    let done = terminated(setup.state.as_ref())
        .cloned()
        .unwrap_or_default();
    assert_eq!(done.exit_code, 0);
    assert_eq!(setup.container_id.as_deref(), Some("containerd://setup-0"));
    assert!(setup.ready);
}

#[test]
fn a_terminated_pod_reports_containers_that_never_ran_as_unknown() {
    let mut knowledge = knowledge();
    knowledge.terminating = true;
    waiting(&mut knowledge, "app", "ImagePullBackOff", "");
    let status = compute(
        &pod("Always", vec![], &["app"]),
        &observed(vec![]),
        &knowledge,
    );
    let app = container_status(&status, "app");
    let done = terminated(app.state.as_ref()).cloned().unwrap_or_default();
    assert_eq!(done.exit_code, 137);
    assert_eq!(done.reason.as_deref(), Some("ContainerStatusUnknown"));
}

#[test]
fn a_deleted_pod_shows_real_exits_not_waiting_reasons() {
    let mut knowledge = knowledge();
    knowledge.terminating = true;
    waiting(&mut knowledge, "app", "CrashLoopBackOff", "");
    let status = compute(
        &pod("Always", vec![], &["app"]),
        &observed(vec![exited("app", 1, 143)]),
        &knowledge,
    );
    let app = container_status(&status, "app");
    let done = terminated(app.state.as_ref()).cloned().unwrap_or_default();
    assert_eq!(done.exit_code, 143);
}
