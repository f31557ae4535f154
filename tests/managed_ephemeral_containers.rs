//! Ephemeral containers against the real API server and the real containerd: added to a
//! running pod through the `ephemeralcontainers` subresource (as `kubectl debug` does), each
//! is started once in the pod's sandbox — in its target's process namespace when it names
//! one — reported in `status.ephemeralContainerStatuses`, reached by name through the node API
//! (logs, exec), never restarted once it exits whatever the pod's restart policy, never
//! counted for the pod's readiness, and stopped with the pod. Before, sergeant never started
//! them: upstream's two `[Conformance]` specs timed out waiting for one to run.
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT).

mod common;

use common::managed::{Managed, DEADLINE};
use common::node::{condition, container, phase, SHELL};
use common::runtime::Runtime;
use common::wait_for;
use serde_json::{json, Value};
use sergeant_runtime_adapters::cri::api::ContainerState;

/// The target's command: a `sleep` whose arguments no other process of the node has.
const TARGET_COMMAND: &str = "sleep 3601";

/// A pod with restart policy `Always` running [`TARGET_COMMAND`] in its one container, `app`.
fn target_spec() -> String {
    format!("  containers:\n  - name: app\n    image: {SHELL}\n    command: [sleep, '3601']\n")
}

/// Adds `ephemeral` (an `EphemeralContainer` object) to pod `name` through the
/// `ephemeralcontainers` subresource, with the strategic merge patch `kubectl debug` sends.
fn add_ephemeral(node: &Managed, name: &str, ephemeral: &Value) {
    let patch = json!({ "spec": { "ephemeralContainers": [ephemeral] } });
    node.patch_subresource(name, "ephemeralcontainers", &patch);
}

/// The status of ephemeral container `name` of `pod`.
fn ephemeral<'a>(pod: &'a Value, name: &str) -> &'a Value {
    container(pod, "ephemeralContainerStatuses", name)
}

/// `kubectl` with `args`, which must succeed; its output.
fn kubectl(node: &Managed, args: &[&str]) -> String {
    let (ok, out) = node.cluster.kubectl(args);
    assert!(ok, "kubectl {args:?}: {out}");
    out
}

/// The instances containerd holds of container `name` of the pod `uid`.
fn instances(runtime: &Runtime, uid: &str, name: &str) -> usize {
    let labels = [
        ("io.kubernetes.pod.uid", uid),
        ("io.kubernetes.container.name", name),
    ];
    runtime.containers(&labels).len()
}

#[test]
fn an_ephemeral_container_joins_its_target_and_is_reached_by_name_until_the_pod_stops() {
    let node = Managed::reachable("eph-target", &[], "");
    let uid = node.create("debugged", &target_spec());
    node.wait_pod("debugged", "running", |p| phase(p) == "Running");

    // It prints the command line of process 1 of its process namespace, then stays up.
    let script = "tr '\\0' ' ' < /proc/1/cmdline; echo; while true; do sleep 1; done";
    add_ephemeral(
        &node,
        "debugged",
        &json!({
            "name": "debugger",
            "image": SHELL,
            "command": ["sh", "-c", script],
            "targetContainerName": "app",
            "stdin": true,
            "tty": true,
        }),
    );
    let pod = node.wait_pod("debugged", "the debugger running", |p| {
        ephemeral(p, "debugger")["state"]["running"].is_object()
    });
    let debugger = ephemeral(&pod, "debugger");
    assert_eq!(debugger["image"], SHELL, "{debugger}");
    assert!(
        debugger["imageID"]
            .as_str()
            .is_some_and(|id| !id.is_empty()),
        "{debugger}"
    );
    let id = debugger["containerID"].as_str().unwrap_or_default();
    assert!(id.starts_with("containerd://"), "{debugger}");
    assert_eq!(debugger["ready"], false, "{debugger}");
    assert_eq!(debugger["restartCount"], 0, "{debugger}");
    let regular = pod["status"]["containerStatuses"].as_array();
    assert_eq!(
        regular.map(Vec::len),
        Some(1),
        "not a regular container: {}",
        pod["status"]
    );
    assert_eq!(condition(&pod, "Ready"), "True", "{}", pod["status"]);

    // Its process namespace is the target's: process 1 there is the target's `sleep`.
    let logs = wait_for("the debugger's first line", DEADLINE, || {
        let (ok, out) = node
            .cluster
            .kubectl(&["logs", "debugged", "-c", "debugger", "-n", "default"]);
        (ok && out.contains('\n')).then_some(out)
    });
    assert_eq!(logs.lines().next().map(str::trim), Some(TARGET_COMMAND));
    let exec = kubectl(
        &node,
        &[
            "exec",
            "debugged",
            "-c",
            "debugger",
            "-n",
            "default",
            "--",
            "sh",
            "-c",
            "tr '\\0' ' ' < /proc/1/cmdline",
        ],
    );
    assert_eq!(exec.trim(), TARGET_COMMAND);

    let events = node.events("debugged", &uid);
    assert!(
        events.iter().any(|e| e["reason"] == "Started"
            && e["involvedObject"]["fieldPath"] == "spec.ephemeralContainers{debugger}"),
        "a Started event names the ephemeral container's field: {events:?}"
    );

    // The pod's deletion stops it with the pod.
    let runtime = Runtime::connect();
    assert_eq!(instances(&runtime, &uid, "debugger"), 1);
    kubectl(
        &node,
        &["delete", "pod", "debugged", "-n", "default", "--wait=false"],
    );
    wait_for("the pod deleted", DEADLINE, || {
        node.pod("debugged").is_none().then_some(())
    });
    let labels = [("io.kubernetes.pod.uid", uid.as_str())];
    let running: Vec<String> = runtime
        .containers(&labels)
        .into_iter()
        .filter(|c| c.state == ContainerState::ContainerRunning as i32)
        .map(|c| c.metadata.map(|m| m.name).unwrap_or_default())
        .collect();
    assert!(
        running.is_empty(),
        "still running after the pod's deletion: {running:?}"
    );
}

#[test]
fn an_exited_ephemeral_container_is_never_restarted() {
    let node = Managed::reachable("eph-once", &[], "");
    let uid = node.create("restarting", &target_spec());
    node.wait_pod("restarting", "running", |p| phase(p) == "Running");

    add_ephemeral(
        &node,
        "restarting",
        &json!({"name": "once", "image": SHELL, "command": ["sh", "-c", "echo done; exit 3"]}),
    );
    let pod = node.wait_pod("restarting", "`once` exited", |p| {
        ephemeral(p, "once")["state"]["terminated"].is_object()
    });
    let once = ephemeral(&pod, "once").clone();
    assert_eq!(once["state"]["terminated"]["exitCode"], 3, "{once}");
    assert_eq!(once["restartCount"], 0, "{once}");

    // A second one, added later (as the conformance spec does), makes the pod actor sync
    // again; `once` stays as it ended, in a pod whose policy restarts every other container.
    add_ephemeral(
        &node,
        "restarting",
        &json!({"name": "later", "image": SHELL, "command": ["sleep", "3600"]}),
    );
    let pod = node.wait_pod("restarting", "`later` running", |p| {
        ephemeral(p, "later")["state"]["running"].is_object()
    });
    let listed = kubectl(
        &node,
        &[
            "get",
            "pod",
            "restarting",
            "-n",
            "default",
            "--subresource=ephemeralcontainers",
            "-o",
            "jsonpath={.spec.ephemeralContainers[*].name}",
        ],
    );
    let mut listed: Vec<&str> = listed.split_whitespace().collect();
    listed.sort_unstable();
    assert_eq!(listed, ["later", "once"], "the subresource lists both");
    let now = ephemeral(&pod, "once");
    assert_eq!(now["containerID"], once["containerID"], "{now}");
    assert_eq!(now["restartCount"], 0, "{now}");
    assert_eq!(now["state"]["terminated"]["exitCode"], 3, "{now}");
    assert_eq!(phase(&pod), "Running");
    assert_eq!(condition(&pod, "Ready"), "True", "{}", pod["status"]);
    let runtime = Runtime::connect();
    assert_eq!(instances(&runtime, &uid, "once"), 1, "one instance, ever");
    assert_eq!(instances(&runtime, &uid, "later"), 1);
    let logs = kubectl(
        &node,
        &["logs", "restarting", "-c", "once", "-n", "default"],
    );
    assert_eq!(logs, "done\n");
}
