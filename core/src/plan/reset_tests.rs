//! The reset of a pod in place (`RestartAllContainers`) as a table: which exits set it off,
//! which instances it takes out of the runtime, in which order, and which it kills first.

use super::*;

/// Container `name` with its own `restartPolicy` and a rule resetting the pod on `codes`.
fn resetting(name: &str, policy: &str, codes: &[i32]) -> Container {
    use k8s_openapi::api::core::v1::{ContainerRestartRule, ContainerRestartRuleOnExitCodes};
    Container {
        restart_policy: Some(policy.into()),
        restart_policy_rules: Some(vec![ContainerRestartRule {
            action: "RestartAllContainers".into(),
            exit_codes: Some(ContainerRestartRuleOnExitCodes {
                operator: "In".into(),
                values: Some(codes.to_vec()),
            }),
        }]),
        ..container(name)
    }
}

/// The pod of upstream's first spec: an init container, a sidecar, the container whose exit
/// 42 resets the pod, and a plain one.
fn pod_with_source() -> Pod {
    pod(
        "Never",
        vec![container("init"), sidecar("side")],
        vec![resetting("source", "Never", &[42]), container("plain")],
    )
}

/// The instances the plan resets, as `(name, killed first)`, in order; and that it plans
/// nothing else.
fn resets(world: &World) -> Vec<(String, bool)> {
    let actions = world.plan();
    let others = PodActions {
        reset: Vec::new(),
        ..actions.clone()
    };
    assert!(
        others.is_idle() && others.waiting.is_empty(),
        "a reset is all the plan does: {actions:?}"
    );
    actions
        .reset
        .iter()
        .map(|r| (r.name.clone(), r.kill))
        .collect()
}

fn row(entries: &[(&str, bool)]) -> Vec<(String, bool)> {
    entries.iter().map(|(n, k)| ((*n).to_owned(), *k)).collect()
}

#[test]
fn a_matching_exit_takes_every_container_out_targets_first_sources_last() {
    let world = ready(World::new(pod_with_source()))
        .container("init", "s1", S::Exited(0))
        .container("side", "s1", S::Running)
        .container("source", "s1", S::Exited(42))
        .container("plain", "s1", S::Running);
    assert_eq!(
        resets(&world),
        row(&[
            ("plain", true),
            ("init", false),
            ("side", true),
            ("source", false)
        ])
    );
}

#[test]
fn an_init_container_that_sets_it_off_is_removed_last() {
    let pod = pod(
        "Never",
        vec![sidecar("side"), resetting("first", "Never", &[42])],
        vec![container("app")],
    );
    let world = ready(World::new(pod))
        .container("side", "s1", S::Running)
        .container("first", "s1", S::Exited(42));
    assert_eq!(resets(&world), row(&[("side", true), ("first", false)]));
}

#[test]
fn a_sidecar_can_set_it_off_and_every_instance_goes() {
    let pod = pod(
        "Never",
        vec![resetting("side", "Always", &[42])],
        vec![container("app")],
    );
    let world = ready(World::new(pod))
        .container("side", "s1", S::Exited(1))
        .container("side", "s1", S::Exited(42))
        .container("app", "s1", S::Running);
    assert_eq!(
        resets(&world),
        row(&[("app", true), ("side", false), ("side", false)]),
        "the older instance exited with a code that resets nothing: a target"
    );
}

#[test]
fn exits_that_do_not_match_follow_the_containers_policy() {
    let pod = pod_with_source;
    let base = |source: S| {
        ready(World::new(pod()))
            .container("init", "s1", S::Exited(0))
            .container("side", "s1", S::Running)
            .container("source", "s1", source)
            .container("plain", "s1", S::Running)
    };
    check(vec![
        ("running source", base(S::Running), nothing()),
        ("exit 1, own Never", base(S::Exited(1)), nothing()),
        (
            "a match in an older sandbox",
            ready(World::new(pod()).sandbox("s0", 0, false, true).container(
                "source",
                "s0",
                S::Exited(42),
            ))
            .container("init", "s1", S::Running),
            nothing(),
        ),
    ]);
    let never_pod = World::new(pod())
        .sandbox("s1", 0, true, true)
        .container("init", "s1", S::Exited(0))
        .container("side", "s1", S::Running)
        .container("source", "s1", S::Exited(1))
        .container("plain", "s1", S::Exited(0));
    assert!(never_pod.plan().kill_pod, "nothing resets: the pod is done");
}

#[test]
fn with_nothing_left_the_pod_starts_afresh_in_its_sandbox() {
    let world = ready(World::new(pod_with_source()));
    let actions = world.plan();
    assert!(actions.reset.is_empty());
    assert_eq!(said(&actions), starts(&["init"]));
    assert_eq!(actions.sandbox_id.as_deref(), Some("s1"));
}
