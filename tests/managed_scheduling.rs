//! The whole path of a cluster workload: a Deployment's pods are scheduled by the real
//! scheduler onto sergeant's node (registered and Ready), run on the real containerd, and
//! report Running with IPs and conditions; scaling down removes them again.

mod common;

use common::managed::{Managed, DEADLINE};
use common::node::SHELL;
use common::wait_for;
use serde_json::Value;

/// The pods of Deployment `app` (label `app=<app>`), as the API server has them.
fn pods(node: &Managed, app: &str) -> Vec<Value> {
    node.cluster
        .get_json(&["pods", "-n", "default", "-l", &format!("app={app}")])
        .and_then(|list| list["items"].as_array().cloned())
        .unwrap_or_default()
}

fn condition(pod: &Value, kind: &str) -> String {
    pod["status"]["conditions"]
        .as_array()
        .and_then(|all| all.iter().find(|c| c["type"] == kind))
        .and_then(|c| c["status"].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn a_deployments_pods_are_scheduled_here_and_run() {
    let node = Managed::start("deploy", &[]);
    wait_for("the node to be Ready", DEADLINE, || {
        let ready = node
            .cluster
            .get_json(&["node", &node.node])
            .is_some_and(|n| {
                n["status"]["conditions"].as_array().is_some_and(|all| {
                    all.iter()
                        .any(|c| c["type"] == "Ready" && c["status"] == "True")
                })
            });
        ready.then_some(())
    });
    let app = format!("web-{}", node.node);
    node.cluster.apply(&format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {app}\n  namespace: default\nspec:\n  replicas: 2\n  \
         selector:\n    matchLabels: {{app: {app}}}\n  template:\n    metadata:\n      labels: {{app: {app}, sergeant-test: {node}}}\n    \
         spec:\n      nodeSelector: {{kubernetes.io/hostname: {node}}}\n      \
         terminationGracePeriodSeconds: 1\n      containers:\n      - name: main\n        image: {SHELL}\n        command: [sleep, '3600']\n",
        node = node.node
    ));
    let running = wait_for("both replicas Running and Ready", DEADLINE, || {
        let all = pods(&node, &app);
        (all.len() == 2
            && all
                .iter()
                .all(|p| p["status"]["phase"] == "Running" && condition(p, "Ready") == "True"))
        .then_some(all)
    });
    for pod in &running {
        assert_eq!(pod["spec"]["nodeName"], node.node.as_str(), "{pod}");
        assert_eq!(condition(pod, "PodScheduled"), "True", "{pod}");
        assert_eq!(condition(pod, "Initialized"), "True", "{pod}");
        assert_eq!(condition(pod, "ContainersReady"), "True", "{pod}");
        let ip = pod["status"]["podIP"].as_str().unwrap_or_default();
        assert!(ip.starts_with("10."), "a pod IP from the CNI bridge: {pod}");
        assert!(
            pod["status"]["containerStatuses"][0]["containerID"]
                .as_str()
                .is_some_and(|id| id.starts_with("containerd://")),
            "{pod}"
        );
    }
    let (ok, out) =
        node.cluster
            .kubectl(&["scale", "deployment", &app, "-n", "default", "--replicas=0"]);
    assert!(ok, "{out}");
    wait_for("the replicas to be gone", DEADLINE, || {
        pods(&node, &app).is_empty().then_some(())
    });
    node.cluster
        .kubectl(&["delete", "deployment", &app, "-n", "default"]);
}
