//! RuntimeClasses against the real control plane and the real containerd, whose
//! `deploy/node-env` configuration has a second runtime handler, `test-handler`: a pod naming a
//! RuntimeClass runs its sandbox on that class's handler; a pod naming a RuntimeClass that does
//! not exist gets no sandbox — a `FailedCreatePodSandBox` event names the missing class — and
//! runs once the class is created (the node watches RuntimeClasses); a pod naming none runs on
//! the default handler. On a standalone node, with no API server to resolve the name by, such a
//! pod is not run at all rather than run on the default handler.
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT).

mod common;

use std::time::Duration;

use common::cluster::Cluster;
use common::managed::{sleeper, Managed};
use common::node::{manifest, phase, Node, SHELL};
use common::runtime::Runtime;
use common::wait_for;

/// The handler `deploy/node-env` configures besides the default `runc`.
const ALT_HANDLER: &str = "test-handler";

/// Creates (or replaces) the RuntimeClass `name` naming `handler`.
fn runtime_class(cluster: &Cluster, name: &str, handler: &str) {
    cluster.apply(&format!(
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: {name}\nhandler: {handler}\n"
    ));
}

/// Deletes the pod `waiting` at once, if it is there (it is not the node's to clean up: it
/// has no `sergeant-test` label).
fn delete_waiting(cluster: &Cluster) {
    cluster.kubectl(&[
        "delete",
        "pod",
        "waiting",
        "-n",
        "default",
        "--ignore-not-found",
        "--grace-period=0",
        "--force",
    ]);
}

/// The runtime handler of the sandbox of the pod with `uid`.
fn sandbox_handler(uid: &str) -> String {
    let sandboxes = Runtime::connect().sandboxes(&[("io.kubernetes.pod.uid", uid)]);
    let sandbox = sandboxes.first().expect("the pod's sandbox");
    sandbox.runtime_handler.clone()
}

#[test]
fn a_pod_runs_on_its_runtime_class_handler_and_waits_for_a_missing_class() {
    let cluster = Cluster::from_env();
    let node_name = "pods-runtime-class";
    let suffix = std::process::id();
    let (alt, late) = (format!("alt-{suffix}"), format!("late-{suffix}"));
    // The API server refuses a pod naming a class that does not exist, so the class of
    // "waiting" goes away between the pod's admission and the node's first look at it.
    runtime_class(&cluster, &late, ALT_HANDLER);
    delete_waiting(&cluster);
    cluster.apply(&format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: waiting\n  namespace: default\nspec:\n  \
         nodeName: {node_name}\n  terminationGracePeriodSeconds: 1\n  runtimeClassName: {late}\n{}",
        sleeper()
    ));
    cluster.kubectl(&["delete", "runtimeclass", &late]);

    let node = Managed::start("runtime-class", &[]);
    runtime_class(&cluster, &alt, ALT_HANDLER);
    let chosen = node.create(
        "chosen",
        &format!("  runtimeClassName: {alt}\n{}", sleeper()),
    );
    let plain = node.create("plain", &sleeper());
    for name in ["chosen", "plain"] {
        node.wait_pod(name, "Running", |p| phase(p) == "Running");
    }
    assert_eq!(sandbox_handler(&chosen), ALT_HANDLER);
    assert_eq!(sandbox_handler(&plain), "", "no class: the default handler");

    let waiting = node.pod("waiting").expect("the waiting pod")["metadata"]["uid"]
        .as_str()
        .expect("a UID")
        .to_owned();
    let event = node.wait_event(("waiting", &waiting), "FailedCreatePodSandBox", |_| true);
    assert_eq!(event["type"], "Warning", "{event}");
    assert_eq!(
        event["message"],
        format!("Failed to create pod sandbox: runtimeclass.node.k8s.io \"{late}\" not found")
    );
    assert!(
        Runtime::connect()
            .sandboxes(&[("io.kubernetes.pod.uid", &waiting)])
            .is_empty(),
        "no sandbox on the default handler meanwhile"
    );
    runtime_class(&cluster, &late, ALT_HANDLER);
    node.wait_pod("waiting", "Running once its class exists", |p| {
        phase(p) == "Running"
    });
    assert_eq!(sandbox_handler(&waiting), ALT_HANDLER);
    delete_waiting(&cluster);
    for name in [alt, late] {
        cluster.kubectl(&["delete", "runtimeclass", &name]);
    }
}

#[test]
fn a_standalone_node_does_not_run_a_pod_that_names_a_runtime_class() {
    let node = Node::start("runtime-class-standalone");
    let spec = format!(
        "  runtimeClassName: kata\n  containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n"
    );
    node.write("named.yaml", &manifest("named", &spec));
    node.write(
        "plain.yaml",
        &manifest("plain", &spec.replace("  runtimeClassName: kata\n", "")),
    );
    node.wait_pod("plain", "Running", |p| phase(p) == "Running");
    wait_for("the refusal counted", Duration::from_secs(30), || {
        let (_, metrics) = node.agent.get("/metrics");
        metrics
            .contains(r#"sergeant_pod_sync_failures_total{cause="runtime_class"}"#)
            .then_some(())
    });
    let named = node.pod("named").expect("the pod is known");
    assert_eq!(phase(&named), "Pending", "{named}");
    let uid = named["metadata"]["uid"].as_str().expect("a UID");
    assert!(
        Runtime::connect()
            .sandboxes(&[("io.kubernetes.pod.uid", uid)])
            .is_empty(),
        "no sandbox on the default handler"
    );
    assert!(
        node.agent
            .log()
            .contains("RuntimeClass \"kata\" cannot be resolved without an API server"),
        "the log says why"
    );
}
