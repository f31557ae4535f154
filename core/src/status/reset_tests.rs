//! The status through a reset in place, step by step as the runtime shows it: the exit that
//! sets it off, every container taken out, the pod started afresh.

use k8s_openapi::api::core::v1::{
    ContainerRestartRule, ContainerRestartRuleOnExitCodes, Pod, PodCondition, PodStatus,
};

use crate::status::testing::{
    container, container_status, exited, knowledge, observed, pod, running,
};
use crate::status::{compute, Knowledge};

/// An init container and `source` (exit 42 resets the pod, own policy `Never`) beside `plain`,
/// in a `Never` pod.
fn resetting_pod() -> Pod {
    let mut pod = pod("Never", vec![container("init")], &["source", "plain"]);
    let spec = pod.spec.as_mut().expect("a spec");
    spec.containers[0].restart_policy = Some("Never".into());
    spec.containers[0].restart_policy_rules = Some(vec![ContainerRestartRule {
        action: "RestartAllContainers".into(),
        exit_codes: Some(ContainerRestartRuleOnExitCodes {
            operator: "In".into(),
            values: Some(vec![42]),
        }),
    }]);
    pod
}

/// The status of `pod` after `previous`, from these runtime containers.
fn next(
    pod: &Pod,
    previous: Option<PodStatus>,
    containers: Vec<k8s_cri::v1::ContainerStatus>,
    knowledge: &Knowledge,
) -> PodStatus {
    let mut pod = pod.clone();
    pod.status = previous;
    compute(&pod, &observed(containers), knowledge)
}

/// The first status of the pod: the init container done, the others running.
fn all_up_once(pod: &Pod) -> PodStatus {
    let containers = vec![
        exited("init", 0, 0),
        running("source", 0),
        running("plain", 0),
    ];
    next(pod, None, containers, &knowledge())
}

fn restarting_condition(status: &PodStatus) -> Option<&PodCondition> {
    let mut conditions = status.conditions.iter().flatten();
    conditions.find(|c| c.type_ == "AllContainersRestarting")
}

fn condition_status(status: &PodStatus, type_: &str) -> String {
    let mut conditions = status.conditions.iter().flatten();
    let found = conditions.find(|c| c.type_ == type_);
    found.map(|c| c.status.clone()).unwrap_or_default()
}

/// `(waiting reason, last state's reason and exit code, restart count)` of container `name`.
fn shown(status: &PodStatus, name: &str) -> (Option<String>, Option<(String, i32)>, i32) {
    let c = container_status(status, name);
    let waiting = c.state.as_ref().and_then(|s| s.waiting.as_ref());
    let last = c.last_state.as_ref().and_then(|s| s.terminated.as_ref());
    (
        waiting.and_then(|w| w.reason.clone()),
        last.map(|t| (t.reason.clone().unwrap_or_default(), t.exit_code)),
        c.restart_count,
    )
}

#[test]
fn the_condition_is_true_from_the_exit_until_every_container_is_out() {
    let pod = resetting_pod();
    let up = all_up_once(&pod);
    assert_eq!(condition_status(&up, "AllContainersRestarting"), "False");
    let exit = next(
        &pod,
        Some(up),
        vec![
            exited("init", 0, 0),
            exited("source", 0, 42),
            running("plain", 0),
        ],
        &knowledge(),
    );
    let condition = restarting_condition(&exit).expect("the pod has a rule");
    assert_eq!(condition.status, "True");
    assert_eq!(
        condition.reason.as_deref(),
        Some("RestartAllContainersStarted")
    );
    assert_eq!(exit.phase.as_deref(), Some("Running"));
    let out = next(&pod, Some(exit), vec![], &knowledge());
    assert_eq!(condition_status(&out, "AllContainersRestarting"), "False");
}

#[test]
fn containers_taken_out_wait_counted_as_restarted_and_the_pod_stays_initialized() {
    let pod = resetting_pod();
    let before = all_up_once(&pod);
    // The look that set the reset off was never reported: the sync's word is enough.
    let just_reset = Knowledge {
        resetting: true,
        ..knowledge()
    };
    let out = next(&pod, Some(before), vec![], &just_reset);
    let removed = |count| {
        (
            Some("RestartingAllContainers".to_owned()),
            Some(("RestartingAllContainers".to_owned(), 137)),
            count,
        )
    };
    for name in ["init", "source", "plain"] {
        assert_eq!(shown(&out, name), removed(1), "{name}");
    }
    assert_eq!(out.phase.as_deref(), Some("Running"), "nothing failed");
    assert_eq!(condition_status(&out, "Initialized"), "True");

    // Afresh: the init container runs again; the others wait their turn, still counted.
    let init_again = next(&pod, Some(out), vec![running("init", 0)], &knowledge());
    let init = shown(&init_again, "init");
    assert_eq!((init.1, init.2), (removed(1).1, 1), "init keeps its count");
    assert_eq!(
        shown(&init_again, "plain"),
        (Some("PodInitializing".to_owned()), removed(1).1, 1)
    );
    let init_done = next(
        &pod,
        Some(init_again),
        vec![exited("init", 0, 0)],
        &knowledge(),
    );
    assert_eq!(
        shown(&init_done, "plain"),
        (Some("ContainerCreating".to_owned()), removed(1).1, 1),
        "still waiting, not shown terminated by the removal"
    );
    let all_up = next(
        &pod,
        Some(init_done),
        vec![
            exited("init", 0, 0),
            running("source", 0),
            running("plain", 0),
        ],
        &knowledge(),
    );
    for name in ["init", "source", "plain"] {
        let (_, last, count) = shown(&all_up, name);
        assert_eq!((last, count), (removed(1).1, 1), "{name}");
    }
    assert_eq!(
        condition_status(&all_up, "AllContainersRestarting"),
        "False"
    );
}

#[test]
fn a_pod_without_a_rule_has_no_condition_and_a_forgotten_container_is_not_reset() {
    let pod = pod("Never", vec![], &["app"]);
    let before = next(&pod, None, vec![running("app", 0)], &knowledge());
    assert!(restarting_condition(&before).is_none());
    let gone = next(&pod, Some(before), vec![], &knowledge());
    assert_ne!(
        shown(&gone, "app").0.as_deref(),
        Some("RestartingAllContainers")
    );
}
