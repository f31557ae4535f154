//! Pod actors and probe workers as supervised children, on the real containerd with faults
//! injected through `FAILPOINTS` (the binary is built with the `failpoints` feature for tests):
//! a pod actor that keeps panicking is restarted with back-off and shows at `/debug/supervision`,
//! past its intensity it is given up and its pod reported with the reason (status and event)
//! while the other pods and the node carry on, and it is tried again after the intensity period;
//! a probe worker that panics is restarted, and its container is not Ready until the new
//! worker's first result; a pod manager that fails is restarted and takes over the pod actors,
//! which kept running.
//!
//! The managed test needs the control plane `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR).
#![cfg(feature = "failpoints")]

mod common;

use std::collections::BTreeMap;

use common::managed::{sleeper, Managed, DEADLINE, HTTPD};
use common::node::{condition, container, manifest, phase, Node, POD_DEADLINE, SHELL};
use common::{tree_node, try_get, wait_for, TestConfig};
use serde_json::Value;

/// Where the pod supervisor's children are in the tree.
const POD_SUPERVISOR: &str = "root/pods/pod-supervisor";

/// Restarts 500 ms doubling, at most 3 in 8 s (the fourth failure gives the child up), and a
/// given-up child is tried again once that period has passed.
const SUPERVISION: &str = "supervision:\n  backoffInitial: 500ms\n  backoffMax: 4s\n  \
                           restartIntensity: 3\n  restartPeriod: 8s\n";

/// Milliseconds since midnight of an RFC 3339 UTC time with milliseconds
/// (`2026-12-03T16:03:55.123Z`), as `/debug/supervision` writes failure times.
fn millis_of_day(at: &str) -> i64 {
    let clock = at
        .split('T')
        .nth(1)
        .and_then(|t| t.strip_suffix('Z'))
        .unwrap_or_else(|| panic!("not an RFC 3339 UTC time: {at}"));
    let (hms, millis) = clock.split_once('.').unwrap_or((clock, "0"));
    let parts: Vec<i64> = hms
        .split(':')
        .chain([millis])
        .map(|p| p.parse().unwrap_or_else(|_| panic!("bad time {at}")))
        .collect();
    ((parts[0] * 60 + parts[1]) * 60 + parts[2]) * 1000 + parts[3]
}

#[test]
fn a_pod_actor_that_keeps_panicking_is_restarted_with_back_off_then_given_up_reported_and_retried_alone(
) {
    // Every incarnation of the actor of `default/crashy` panics when it first syncs, four times;
    // the fifth (after the give-up period) runs.
    let node = Managed::start_with(
        "pods-podsup-crash",
        &[(
            "FAILPOINTS",
            "pod::sync/default/crashy=4*panic(injected pod actor crash)",
        )],
        TestConfig::new().sergeant(SUPERVISION),
        &[],
    );
    let steady_spec = format!(
        "  containers:\n  - name: web\n    image: {HTTPD}\n    readinessProbe:\n      \
         httpGet: {{port: 8080}}\n      periodSeconds: 1\n"
    );
    let steady_uid = node.create("steady", &steady_spec);
    node.wait_pod("steady", "Running and Ready", |p| {
        phase(p) == "Running" && condition(p, "Ready") == "True"
    });
    let crashy_uid = node.create("crashy", &sleeper());
    let crashy_path = format!("{POD_SUPERVISOR}/{crashy_uid}");

    // Each failure's time, by its number (the restarts done before it, plus one), as the
    // supervisor recorded it while the child waited out its back-off or was given up.
    let mut failures: BTreeMap<u64, String> = BTreeMap::new();
    let given_up = wait_for("the crashing pod actor to be given up", DEADLINE, || {
        let tree = node.agent.get_json("/debug/supervision");
        let crashy = tree_node(&tree, &crashy_path).clone();
        let state = crashy["state"].as_str().unwrap_or_default();
        if state == "restarting" || state == "gave_up" {
            let restarts = crashy["restarts"].as_u64().unwrap_or_default();
            let at = crashy["last_failure"]["at"].as_str().unwrap_or_default();
            failures.insert(restarts + 1, at.to_owned());
        }
        (state == "gave_up").then_some((tree, crashy))
    });
    let (tree, crashy) = given_up;
    assert_eq!(crashy["restarts"], 3, "{crashy}");
    let failure = crashy["last_failure"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        failure.contains("panicked") && failure.contains("injected pod actor crash"),
        "{failure}"
    );
    // Back-off: 500 ms before the first restart, doubling, between the supervisor's own
    // failure times (each incarnation failed as soon as it started).
    assert_eq!(failures.len(), 4, "every failure was seen: {failures:?}");
    for (number, backoff) in [(1, 500), (2, 1000), (3, 2000)] {
        let gap = millis_of_day(&failures[&(number + 1)]) - millis_of_day(&failures[&number]);
        let gap = if gap < 0 { gap + 86_400_000 } else { gap };
        assert!(
            gap >= backoff,
            "failure {} came {gap} ms after failure {number}, before the {backoff} ms back-off: {failures:?}",
            number + 1
        );
    }

    // The rest of the node is untouched: the other pod's actor never restarted, its pod runs
    // Ready, and the node is healthy.
    let steady = tree_node(&tree, &format!("{POD_SUPERVISOR}/{steady_uid}"));
    assert_eq!(steady["state"], "running", "{tree}");
    assert_eq!(steady["restarts"], 0, "{tree}");
    assert_eq!(tree_node(&tree, POD_SUPERVISOR)["state"], "running");
    assert_eq!(tree_node(&tree, "root/pods/pod-manager")["restarts"], 0);
    let (status, body) = try_get(&format!("{}/healthz", node.agent.healthz)).expect("healthz");
    assert_eq!((status, body.as_str()), (200, "ok"), "{tree}");
    let pod = node.pod("steady").expect("steady is listed");
    assert_eq!(phase(&pod), "Running", "{pod}");
    assert_eq!(condition(&pod, "Ready"), "True", "{pod}");

    // The given-up pod is reported: its status says why, and so does a Warning event.
    let pod = node.wait_pod("crashy", "reported as given up", |p| {
        p["status"]["reason"] == "FailedSync"
    });
    let message = pod["status"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("injected pod actor crash") && message.contains("3 restarts in 8s"),
        "{pod}"
    );
    assert_ne!(condition(&pod, "Ready"), "True", "{pod}");
    let event = node.wait_event(("crashy", &crashy_uid), "FailedSync", |e| {
        e["type"] == "Warning"
    });
    let said = event["message"].as_str().unwrap_or_default();
    assert!(said.contains("injected pod actor crash"), "{event}");
    let restarts = node.metric(&format!(
        "sergeant_actor_restarts_total{{actor=\"{crashy_path}\"}}"
    ));
    assert_eq!(
        restarts,
        Some(3.0),
        "the restarts are counted per pod actor"
    );

    // Tried again after the intensity period: the fault is spent, the pod runs, and its status
    // no longer carries the reason.
    let pod = node.wait_pod("crashy", "running after the retry", |p| {
        phase(p) == "Running" && p["status"]["reason"].is_null()
    });
    assert!(
        container(&pod, "containerStatuses", "c")["state"]["running"].is_object(),
        "{pod}"
    );
    let tree = node.agent.get_json("/debug/supervision");
    let crashy = tree_node(&tree, &crashy_path);
    assert_eq!(crashy["state"], "running", "{tree}");
    assert_eq!(crashy["restarts"], 4, "{tree}");
}

#[test]
fn a_probe_worker_that_panics_is_restarted_and_its_container_is_unready_until_its_first_result() {
    // The readiness worker of the pod panics at its ninth attempt, once. Three successes in a
    // row make the container Ready, so the new worker needs about two seconds to vouch for it.
    let node_name = "node-podsup-probe";
    let pod_name = format!("ready-{node_name}");
    let failpoint = format!("probe::tick/default/{pod_name}=8*off->1*panic(injected probe crash)");
    let node = Node::start_with_env("podsup-probe", "", &[("FAILPOINTS", &failpoint)]);
    let spec = format!(
        "  containers:\n  - name: main\n    image: {HTTPD}\n    readinessProbe:\n      \
         httpGet: {{path: /, port: 8080}}\n      periodSeconds: 1\n      successThreshold: 3\n"
    );
    node.write("ready.yaml", &manifest("ready", &spec));
    let ready = |p: &Value| container(p, "containerStatuses", "main")["ready"] == true;
    let before = node.wait_pod("ready", "Ready", ready);
    let uid = before["metadata"]["uid"]
        .as_str()
        .expect("a UID")
        .to_owned();
    let id = container(&before, "containerStatuses", "main")["containerID"].clone();
    let worker = format!("{POD_SUPERVISOR}/{uid}/main:readiness");

    let unready = node.wait_pod("ready", "not Ready once its worker died", |p| !ready(p));
    let tree = wait_for("the readiness worker's restart", POD_DEADLINE, || {
        let tree = node.agent.get_json("/debug/supervision");
        (tree_node(&tree, &worker)["restarts"] == 1).then_some(tree)
    });
    let failure = tree_node(&tree, &worker)["last_failure"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(failure.contains("injected probe crash"), "{failure}");
    assert_eq!(
        tree_node(&tree, &format!("{POD_SUPERVISOR}/{uid}"))["restarts"],
        0,
        "the pod actor carried on: {tree}"
    );

    let after = node.wait_pod("ready", "Ready again", ready);
    for pod in [&unready, &after] {
        let main = container(pod, "containerStatuses", "main");
        assert_eq!(main["containerID"], id, "the same container: {pod}");
        assert_eq!(main["restartCount"], 0, "{pod}");
        assert_eq!(phase(pod), "Running", "{pod}");
    }
    let (_, metrics) = node.agent.get("/metrics");
    assert!(
        metrics.contains(&format!(
            "sergeant_actor_restarts_total{{actor=\"{worker}\"}} 1"
        )),
        "{metrics}"
    );
}

#[test]
fn a_restarted_pod_manager_takes_over_the_pod_actors_that_kept_running() {
    // The pod manager fails at its fifth look at the sources: once the pod runs, the test
    // adds manifests the source refuses, one look each, until it has.
    let node = Node::start_with_env(
        "podsup-adopt",
        "",
        &[(
            "FAILPOINTS",
            "pod-manager::reconcile=4*off->1*return(injected pod manager failure)",
        )],
    );
    let spec =
        format!("  containers:\n  - name: c\n    image: {SHELL}\n    command: [sleep, '3600']\n");
    node.write("kept.yaml", &manifest("kept", &spec));
    let before = node.wait_pod("kept", "Running", |p| phase(p) == "Running");
    let uid = before["metadata"]["uid"]
        .as_str()
        .expect("a UID")
        .to_owned();
    let id = container(&before, "containerStatuses", "c")["containerID"].clone();
    let pod_actor = format!("{POD_SUPERVISOR}/{uid}");

    let mut refused = 0;
    let tree = wait_for("the pod manager's restart", POD_DEADLINE, || {
        let tree = node.agent.get_json("/debug/supervision");
        if tree_node(&tree, "root/pods/pod-manager")["restarts"] == 1 {
            return Some(tree);
        }
        refused += 1;
        node.write(&format!("refused-{refused}.yaml"), "kind: [not a pod\n");
        std::thread::sleep(std::time::Duration::from_millis(300));
        None
    });
    let manager = tree_node(&tree, "root/pods/pod-manager");
    let failure = manager["last_failure"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        failure.contains("injected pod manager failure"),
        "{failure}"
    );
    let actor = tree_node(&tree, &pod_actor);
    assert_eq!(actor["state"], "running", "{tree}");
    assert_eq!(actor["restarts"], 0, "the pod actor kept running: {tree}");

    // The new pod manager lists the pod again (it lists only what the pod actors it knows
    // report), reported by the same pod actor.
    let after = node.wait_pod("kept", "listed again", |p| phase(p) == "Running");
    let c = container(&after, "containerStatuses", "c");
    assert_eq!(c["containerID"], id, "the same container: {after}");
    assert_eq!(c["restartCount"], 0, "{after}");
    let tree = node.agent.get_json("/debug/supervision");
    assert_eq!(tree_node(&tree, &pod_actor)["restarts"], 0, "{tree}");
}
