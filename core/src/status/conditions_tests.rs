//! Tests of the pod conditions and their transition times.

use k8s_openapi::api::core::v1::{PodCondition, PodStatus, Probe};

use crate::status::testing::{at, container, exited, knowledge, observed, pod, running, sidecar};
use crate::status::{compute, Knowledge, Observed};

fn find<'a>(status: &'a PodStatus, type_: &str) -> &'a PodCondition {
    status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == type_)
        .unwrap_or_else(|| panic!("no condition {type_}"))
}

/// `(status, reason, message)` of a condition.
fn summary(status: &PodStatus, type_: &str) -> (String, Option<String>, Option<String>) {
    let c = find(status, type_);
    (c.status.clone(), c.reason.clone(), c.message.clone())
}

fn is_true(status: &PodStatus, type_: &str) -> bool {
    find(status, type_).status == "True"
}

#[test]
fn a_running_ready_pod_has_every_condition_true_in_order() {
    let status = compute(
        &pod("Always", vec![], &["app"]),
        &observed(vec![running("app", 0)]),
        &knowledge(),
    );
    let types: Vec<&str> = status
        .conditions
        .iter()
        .flatten()
        .map(|c| c.type_.as_str())
        .collect();
    assert_eq!(
        types,
        [
            "PodReadyToStartContainers",
            "Initialized",
            "Ready",
            "ContainersReady",
            "PodScheduled"
        ]
    );
    assert!(status
        .conditions
        .iter()
        .flatten()
        .all(|c| c.status == "True"));
    assert!(status
        .conditions
        .iter()
        .flatten()
        .all(|c| c.reason.is_none()));
}

#[test]
fn unready_containers_are_named() {
    let mut pod = pod("Always", vec![sidecar("proxy")], &["app", "web"]);
    if let Some(spec) = pod.spec.as_mut() {
        spec.containers[1].readiness_probe = Some(Probe::default());
    }
    let containers = vec![running("proxy", 0), running("web", 0)];
    let status = compute(&pod, &observed(containers), &knowledge());
    let expected = (
        "False".to_owned(),
        Some("ContainersNotReady".to_owned()),
        Some("containers with unready status: [app web]".to_owned()),
    );
    assert_eq!(summary(&status, "ContainersReady"), expected);
    assert_eq!(summary(&status, "Ready"), expected);
}

#[test]
fn an_unready_sidecar_makes_the_pod_unready() {
    let mut knowledge = knowledge();
    knowledge.ready.insert("proxy".into(), false);
    let pod = pod("Always", vec![sidecar("proxy")], &["app"]);
    let containers = vec![running("proxy", 0), running("app", 0)];
    let status = compute(&pod, &observed(containers), &knowledge);
    let (_, _, message) = summary(&status, "Ready");
    assert_eq!(
        message.as_deref(),
        Some("containers with unready status: [proxy]")
    );
}

#[test]
fn unfinished_init_containers_and_unstarted_sidecars_are_named() {
    let mut proxy = sidecar("proxy");
    proxy.startup_probe = Some(Probe::default());
    let pod = pod(
        "Always",
        vec![container("setup"), proxy, container("migrate")],
        &["app"],
    );
    let containers = vec![exited("setup", 0, 0), running("proxy", 0)];
    let status = compute(&pod, &observed(containers), &knowledge());
    assert_eq!(
        summary(&status, "Initialized"),
        (
            "False".to_owned(),
            Some("ContainersNotInitialized".to_owned()),
            Some("containers with incomplete status: [proxy migrate]".to_owned()),
        )
    );
}

#[test]
fn a_failed_init_container_keeps_the_pod_uninitialized() {
    let pod = pod("OnFailure", vec![container("setup")], &["app"]);
    let status = compute(&pod, &observed(vec![exited("setup", 0, 1)]), &knowledge());
    assert!(!is_true(&status, "Initialized"));
}

#[test]
fn a_restarting_sidecar_does_not_undo_initialization() {
    let pod = pod("Always", vec![sidecar("proxy")], &["app"]);
    let containers = vec![exited("proxy", 0, 1), running("app", 0)];
    let status = compute(&pod, &observed(containers), &knowledge());
    assert!(is_true(&status, "Initialized"));
    assert!(!is_true(&status, "Ready"));
}

#[test]
fn a_succeeded_pod_is_initialized_and_unready_because_completed() {
    let pod = pod("Never", vec![container("setup")], &["job"]);
    let containers = vec![exited("setup", 0, 0), exited("job", 0, 0)];
    let status = compute(&pod, &observed(containers), &knowledge());
    assert_eq!(status.phase.as_deref(), Some("Succeeded"));
    let completed = Some("PodCompleted".to_owned());
    assert_eq!(
        summary(&status, "Initialized"),
        ("True".to_owned(), completed.clone(), None)
    );
    assert_eq!(
        summary(&status, "Ready"),
        ("False".to_owned(), completed.clone(), None)
    );
    assert_eq!(
        summary(&status, "ContainersReady"),
        ("False".to_owned(), completed, None)
    );
}

#[test]
fn ready_to_start_containers_needs_a_ready_sandbox_with_network() {
    let pod = pod("Always", vec![], &["app"]);
    let none = Observed::default();
    let status = compute(&pod, &none, &knowledge());
    assert!(!is_true(&status, "PodReadyToStartContainers"));
    assert!(is_true(&status, "PodScheduled"));

    let mut no_ip = observed(vec![]);
    if let Some(sandbox) = no_ip.sandbox.as_mut() {
        sandbox.network = None;
    }
    assert!(!is_true(
        &compute(&pod, &no_ip, &knowledge()),
        "PodReadyToStartContainers"
    ));

    let mut host = pod.clone();
    if let Some(spec) = host.spec.as_mut() {
        spec.host_network = Some(true);
    }
    assert!(is_true(
        &compute(&host, &no_ip, &knowledge()),
        "PodReadyToStartContainers"
    ));
    assert!(is_true(
        &compute(&pod, &observed(vec![]), &knowledge()),
        "PodReadyToStartContainers"
    ));
}

#[test]
fn transition_times_move_only_when_the_status_changes() {
    let mut pod = pod("Always", vec![], &["app"]);
    let first = compute(&pod, &observed(vec![]), &knowledge());
    assert_eq!(find(&first, "Ready").last_transition_time, Some(at(1000)));
    pod.status = Some(first);

    let later = Knowledge {
        now: Some(at(2000)),
        ..knowledge()
    };
    let second = compute(&pod, &observed(vec![running("app", 0)]), &later);
    assert_eq!(find(&second, "Ready").last_transition_time, Some(at(2000)));
    assert_eq!(
        find(&second, "PodScheduled").last_transition_time,
        Some(at(1000))
    );
    assert_eq!(
        find(&second, "Initialized").last_transition_time,
        Some(at(1000))
    );
}

#[test]
fn conditions_the_kubelet_does_not_own_are_kept() {
    let mut pod = pod("Always", vec![], &["app"]);
    let target = PodCondition {
        type_: "DisruptionTarget".into(),
        status: "True".into(),
        reason: Some("EvictionByEvictionAPI".into()),
        last_transition_time: Some(at(5)),
        ..PodCondition::default()
    };
    pod.status = Some(PodStatus {
        conditions: Some(vec![target.clone()]),
        ..PodStatus::default()
    });
    let status = compute(&pod, &observed(vec![running("app", 0)]), &knowledge());
    assert_eq!(status.conditions.iter().flatten().last(), Some(&target));
    assert_eq!(status.conditions.iter().flatten().count(), 6);
}

#[test]
fn conditions_carry_the_observed_generation() {
    let mut pod = pod("Always", vec![], &["app"]);
    pod.metadata.generation = Some(4);
    let status = compute(&pod, &observed(vec![]), &knowledge());
    assert!(status
        .conditions
        .iter()
        .flatten()
        .all(|c| c.observed_generation == Some(4)));
}

#[test]
fn readiness_gates_hold_the_pod_unready_until_their_conditions_are_true() {
    let gate = |status: &str| PodCondition {
        type_: "example.com/gate".into(),
        status: status.into(),
        ..PodCondition::default()
    };
    let mut pod = pod("Always", vec![], &["app"]);
    if let Some(spec) = pod.spec.as_mut() {
        spec.readiness_gates = Some(vec![k8s_openapi::api::core::v1::PodReadinessGate {
            condition_type: "example.com/gate".into(),
        }]);
    }
    let ready_with = |conditions: Vec<PodCondition>| {
        let mut pod = pod.clone();
        pod.status = Some(PodStatus {
            conditions: Some(conditions),
            ..PodStatus::default()
        });
        let status = compute(&pod, &observed(vec![running("app", 0)]), &knowledge());
        assert!(is_true(&status, "ContainersReady"), "{status:?}");
        summary(&status, "Ready")
    };
    let unready = |message: &str| {
        (
            "False".to_owned(),
            Some("ReadinessGatesNotReady".to_owned()),
            Some(message.to_owned()),
        )
    };
    assert_eq!(
        ready_with(vec![]),
        unready(
            "corresponding condition of pod readiness gate \"example.com/gate\" does not exist."
        )
    );
    assert_eq!(
        ready_with(vec![gate("False")]),
        unready("the status of pod readiness gate \"example.com/gate\" is not \"True\", but False")
    );
    assert_eq!(
        ready_with(vec![gate("True")]),
        ("True".to_owned(), None, None)
    );
}

/// A resize not allocated shows `PodResizePending` with its reason and message, keeps its
/// transition time while its reason stays, takes a new one when the reason changes, and goes
/// once the resize is allocated or the pod has finished.
#[test]
fn a_pending_resize_shows_while_it_is_pending() {
    use crate::allocation::{PendingReason, PendingResize};
    let pending = |reason, message: &str| PendingResize {
        reason,
        message: message.to_owned(),
        generation: Some(2),
        since: std::time::Instant::now(),
    };
    let at_time = |seconds, resize_pending| Knowledge {
        now: Some(at(seconds)),
        resize_pending,
        ..knowledge()
    };
    let pod_of = |policy, containers: &[&str]| pod(policy, vec![], containers);
    let mut pod = pod_of("Always", &["app"]);
    let runtime = observed(vec![running("app", 0)]);
    let deferred = pending(
        PendingReason::Deferred,
        "Node didn't have enough resource: cpu",
    );
    let first = compute(&pod, &runtime, &at_time(1000, Some(deferred.clone())));
    assert_eq!(
        summary(&first, "PodResizePending"),
        (
            "True".to_owned(),
            Some("Deferred".to_owned()),
            Some(deferred.message.clone())
        )
    );
    pod.status = Some(first);
    let still = compute(&pod, &runtime, &at_time(2000, Some(deferred)));
    assert_eq!(
        find(&still, "PodResizePending").last_transition_time,
        Some(at(1000))
    );
    pod.status = Some(still);
    let infeasible = pending(PendingReason::Infeasible, "not here");
    let other = compute(&pod, &runtime, &at_time(3000, Some(infeasible)));
    assert_eq!(
        find(&other, "PodResizePending").last_transition_time,
        Some(at(3000))
    );
    pod.status = Some(other);
    let allocated = compute(&pod, &runtime, &at_time(4000, None));
    let shown = |status: &PodStatus| {
        status
            .conditions
            .iter()
            .flatten()
            .any(|c| c.type_ == "PodResizePending")
    };
    assert!(!shown(&allocated));

    // A pod that finished shows no resize waiting.
    let mut job = pod_of("Never", &["app"]);
    let still_pending = at_time(5000, Some(pending(PendingReason::Deferred, "x")));
    let running_job = compute(&job, &observed(vec![running("app", 0)]), &still_pending);
    assert!(shown(&running_job));
    job.status = Some(running_job);
    let done = compute(&job, &observed(vec![exited("app", 0, 0)]), &still_pending);
    assert_eq!(done.phase.as_deref(), Some("Succeeded"));
    assert!(!shown(&done), "{done:?}");
}
