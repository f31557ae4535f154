//! Ephemeral containers in the plan, as a table: started once in the ready sandbox (in their
//! target's process namespace), never again whatever the restart policy, never keeping a pod
//! alive, and not before their target has an instance.

use k8s_openapi::api::core::v1::EphemeralContainer;

use super::*;

/// `pod` with the ephemeral container `debug`, targeting `target` when given.
fn with_debug(mut pod: Pod, target: Option<&str>) -> Pod {
    let debug = EphemeralContainer {
        name: "debug".into(),
        image: Some("shell:1".into()),
        target_container_name: target.map(Into::into),
        ..Default::default()
    };
    pod.spec.as_mut().unwrap().ephemeral_containers = Some(vec![debug]);
    pod
}

/// One regular container `a`, and `debug`.
fn debugged(policy: &str, target: Option<&str>) -> Pod {
    with_debug(pod(policy, vec![], vec![container("a")]), target)
}

/// An instance of `debug` (which has no spec hash: sergeant records none it could compare).
fn debug_instance(world: World, sandbox: &str, state: S) -> World {
    world.instance("debug", sandbox, state, 0, "")
}

#[test]
fn ephemeral_containers_start_once() {
    let running = || ready(World::new(debugged("Always", None))).container("a", "s1", S::Running);
    check(vec![
        (
            "added to a running pod: started",
            running(),
            starts(&["debug"]),
        ),
        (
            "running: kept",
            debug_instance(running(), "s1", S::Running),
            nothing(),
        ),
        (
            "exited, in an Always pod: never restarted",
            debug_instance(running(), "s1", S::Exited(1)),
            nothing(),
        ),
        (
            "in an unknown state: left alone",
            debug_instance(running(), "s1", S::Unknown),
            nothing(),
        ),
        (
            "ran in an older sandbox: not started in the new one",
            debug_instance(
                World::new(debugged("Always", None)).sandbox("s0", 0, false, true),
                "s0",
                S::Exited(0),
            )
            .sandbox("s2", 1, true, true)
            .container("a", "s2", S::Running),
            nothing(),
        ),
        (
            "created but never started: removed and made again",
            debug_instance(running(), "s1", S::Created),
            Said {
                remove: 1,
                ..starts(&["debug"])
            },
        ),
        (
            "after the regular containers of the same plan",
            ready(World::new(debugged("Always", None))),
            starts(&["a", "debug"]),
        ),
        (
            "while an init container still runs, as upstream",
            ready(World::new(with_debug(
                pod("Always", vec![container("i")], vec![container("a")]),
                None,
            )))
            .container("i", "s1", S::Running),
            starts(&["debug"]),
        ),
    ]);
}

#[test]
fn ephemeral_containers_wait_for_a_sandbox_and_keep_no_pod_alive() {
    check(vec![
        (
            "a pod being given a sandbox starts its own containers first",
            World::new(debugged("Always", None)),
            creates(0, SandboxReason::NoSandbox, &["a"]),
        ),
        (
            "a Never pod whose containers are done is killed, its debugger with it",
            debug_instance(
                ready(World::new(debugged("Never", None))).container("a", "s1", S::Exited(0)),
                "s1",
                S::Running,
            ),
            kills_pod(),
        ),
        (
            "nor is one started in a pod that is done",
            ready(World::new(debugged("Never", None))).container("a", "s1", S::Exited(0)),
            kills_pod(),
        ),
    ]);
}

#[test]
fn a_target_shares_its_process_namespace_once_it_exists() {
    let world = ready(World::new(debugged("Always", Some("a")))).container("a", "s1", S::Running);
    let actions = world.plan();
    assert_eq!(said(&actions), starts(&["debug"]));
    let start = &actions.start[0];
    assert_eq!(start.kind, ContainerKind::Ephemeral);
    assert_eq!(start.pid_target, Some(world.id_of("a")));
    assert_eq!((start.restart_count, &start.after_exit), (0, &None));

    let no_target = ready(World::new(debugged("Always", Some("a"))));
    let actions = no_target.plan();
    assert_eq!(
        said(&actions),
        Said {
            waiting: vec!["debug".into()],
            ..starts(&["a"])
        }
    );
    assert_eq!(
        actions.waiting["debug"],
        Waiting {
            reason: "CreateContainerConfigError".into(),
            message: "unable to find target container a".into(),
        },
        "the target's start in this plan comes first; the next plan finds it"
    );
}
