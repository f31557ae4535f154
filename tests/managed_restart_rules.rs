//! Container restart rules (upstream's `ContainerRestartRules`, on by default in the pinned
//! release) against the real API server and the real containerd: a container's own
//! `restartPolicy` overrides the pod's, and a `Restart` rule matching the exit code restarts a
//! container whose policy says `Never`, as upstream's "Pod Extended (container restart policy)"
//! specs expect. Before, sergeant read only the pod's policy (and refused a regular container's
//! own policy in a static pod).
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT).

mod common;

use common::managed::Managed;
use common::node::{container, phase, SHELL};

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
