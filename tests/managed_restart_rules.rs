//! Container restart rules (upstream's `ContainerRestartRules`, on by default in the pinned
//! release) against the real API server and the real containerd: a container's own
//! `restartPolicy` overrides the pod's, and a `Restart` rule matching the exit code restarts a
//! container whose policy says `Never`, as upstream's "Pod Extended (container restart policy)"
//! specs expect. Before, sergeant read only the pod's policy (and refused a regular container's
//! own policy in a static pod). With `ContainerRestartRules` or
//! `RestartAllContainersOnContainerExits` set off in `featureGates`, sergeant reads them as
//! upstream's kubelet does with those gates off.
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT).

mod common;

use common::managed::Managed;
use common::node::{container, manifest, phase, Node, SHELL};
use common::TestConfig;

/// The restart count of the pod's container `main`.
fn restarts(pod: &serde_json::Value) -> i64 {
    container(pod, "containerStatuses", "main")["restartCount"]
        .as_i64()
        .unwrap_or(0)
}

#[test]
fn a_containers_own_policy_and_its_rules_decide_its_restarts() {
    let node = Managed::start("restart-rules", &[]);
    let main = |pod_policy: &str, own: &str, rules: &str, script: &str| {
        format!(
            "  restartPolicy: {pod_policy}\n  containers:\n  - name: main\n    image: {SHELL}\n    \
             command: [sh, -c, '{script}']\n    restartPolicy: {own}\n{rules}    \
             volumeMounts:\n    - {{name: work, mountPath: /work}}\n  volumes:\n  - name: work\n    emptyDir: {{}}\n"
        )
    };
    let on_42 = "    restartPolicyRules:\n    - action: Restart\n      exitCodes: {operator: In, values: [42]}\n";
    // Exits 42 the first time, then stays up.
    let once_42 = "if [ -f /work/ran ]; then sleep 3600; else touch /work/ran; exit 42; fi";
    node.create("rule-match", &main("Never", "Never", on_42, once_42));
    node.create("rule-mismatch", &main("Never", "Never", on_42, "exit 1"));
    node.create("own-never", &main("Always", "Never", "", "exit 1"));
    let once_1 = "if [ -f /work/ran ]; then sleep 3600; else touch /work/ran; exit 1; fi";
    node.create("own-always", &main("Never", "Always", "", once_1));

    for name in ["rule-match", "own-always"] {
        let pod = node.wait_pod(name, "restarted once and running", |p| {
            restarts(p) == 1
                && container(p, "containerStatuses", "main")["state"]["running"].is_object()
        });
        assert_eq!(phase(&pod), "Running", "{name}: {}", pod["status"]);
    }
    for name in ["rule-mismatch", "own-never"] {
        let pod = node.wait_pod(name, "Failed", |p| phase(p) == "Failed");
        assert_eq!(
            restarts(&pod),
            0,
            "{name} was not restarted: {}",
            pod["status"]
        );
    }
}

#[test]
fn with_their_feature_gates_off_the_pods_and_the_containers_policies_decide() {
    let main = |own: &str, rules: &str| {
        format!(
            "  restartPolicy: Always\n  containers:\n  - name: main\n    image: {SHELL}\n    \
             command: [sh, -c, 'if [ -f /work/ran ]; then sleep 3600; else touch /work/ran; exit 42; fi']\n    \
             restartPolicy: {own}\n{rules}    \
             volumeMounts:\n    - {{name: work, mountPath: /work}}\n  volumes:\n  - name: work\n    emptyDir: {{}}\n"
        )
    };
    // ContainerRestartRules off: the container's own Never is not read, the pod's Always is. A
    // static pod: the API server (its gate on) refuses a status in which a container whose own
    // policy is Never runs again, so the mixed setting is shown where no API server judges.
    let no_rules = Node::start_with(
        "rules-gate-off",
        "featureGates:\n  ContainerRestartRules: false\n",
    );
    no_rules.write(
        "own-never.yaml",
        &manifest("gate-own-never", &main("Never", "")),
    );
    let pod = no_rules.wait_pod("gate-own-never", "restarted by the pod's policy", |p| {
        restarts(p) == 1
            && container(p, "containerStatuses", "main")["state"]["running"].is_object()
    });
    assert_eq!(phase(&pod), "Running", "{}", pod["status"]);

    // RestartAllContainersOnContainerExits off: a matching RestartAllContainers rule falls back
    // to the container's own OnFailure; the pod is not reset and carries no such condition.
    let no_reset = Managed::start_with(
        "reset-gate-off",
        &[],
        TestConfig::new().kubelet("featureGates:\n  RestartAllContainersOnContainerExits: false\n"),
        &[],
    );
    let on_42 = "    restartPolicyRules:\n    - action: RestartAllContainers\n      exitCodes: {operator: In, values: [42]}\n";
    no_reset.create("gate-rule-all", &main("OnFailure", on_42));
    let pod = no_reset.wait_pod("gate-rule-all", "restarted by its own policy", |p| {
        restarts(p) == 1
            && container(p, "containerStatuses", "main")["state"]["running"].is_object()
    });
    let conditions = pod["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        conditions
            .iter()
            .all(|c| c["type"] != "AllContainersRestarting"),
        "no reset without its gate: {}",
        pod["status"]
    );
    let node = no_reset
        .cluster
        .get_json(&["node", &no_reset.node])
        .expect("the node");
    let declared = node["status"]["declaredFeatures"].to_string();
    assert!(
        !declared.contains("RestartAllContainersOnContainerExits"),
        "the node does not declare a feature whose gate is off: {declared}"
    );
}
