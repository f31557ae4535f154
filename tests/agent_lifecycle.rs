//! The agent as an operator runs it: start-up on the example configuration, the endpoints it
//! serves, and a clean, ordered stop on SIGTERM.

mod common;

use std::time::Duration;

use common::{tree_node, try_get, wait_for, Agent};
use nix::sys::signal::Signal;

#[test]
fn the_standalone_example_starts_serves_its_endpoints_and_stops_cleanly_on_sigterm() {
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/examples/standalone.yaml");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut agent = Agent::spawn_with(dir, example, 10248, 10255, &[], &[]);
    agent.wait_ready();

    let (status, body) = try_get(&format!("{}/healthz", agent.healthz)).expect("healthz answers");
    assert_eq!((status, body.as_str()), (200, "ok"));

    let tree = agent.get_json("/debug/supervision");
    assert_eq!(tree["name"], "root");
    assert_eq!(tree["strategy"], "one_for_one");
    let names: Vec<&str> = tree["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["config-watcher", "runtime", "node", "pods", "server"]
    );
    assert_eq!(tree_node(&tree, "root/runtime")["strategy"], "rest_for_one");
    let cni = tree_node(&tree, "root/runtime/cni-adapter");
    assert_eq!(cni["state"], "running", "{cni}");
    // The CNI adapter says what it checked: containerd's network file and plugin binaries.
    let checked = wait_for(
        "the CNI adapter's first check",
        Duration::from_secs(20),
        || {
            let status = agent.child_status("root/runtime/cni-adapter");
            (status != "first check under way").then_some(status)
        },
    );
    assert!(
        checked.starts_with("/run/sergeant-node/main/cni/net.d (named by the runtime): ")
            && checked.contains("10-sergeant.conflist: usable")
            && checked.contains("plugin binaries checked in /usr/lib/cni"),
        "{checked}"
    );
    let eviction = wait_for(
        "the eviction manager's first decision",
        Duration::from_secs(30),
        || {
            let tree = agent.get_json("/debug/supervision");
            let node = tree_node(&tree, "root/node/eviction-manager").clone();
            node["status"]
                .as_str()
                .is_some_and(|s| s.contains("thresholds; pressure:"))
                .then_some(node)
        },
    );
    assert_eq!(eviction["state"], "running", "{eviction}");
    for (path, says) in [
        ("root/runtime/runtime-adapter", "serving cri at "),
        ("root/runtime/pleg", "relisting every 1s"),
        ("root/pods/sources", "watching /etc/kubernetes/manifests"),
        ("root/pods/pod-manager", "0 pod actors"),
        ("root/node/gc", "collecting dead containers every 60s"),
        ("root/node/image-gc", "collecting unused images every 300s"),
        ("root/node/node-status", "standalone: no API server"),
        ("root/pods/status-manager", "standalone: no API server"),
        (
            "root/node/container-log-manager",
            "checking container logs every 10s",
        ),
    ] {
        wait_for(
            &format!("{path} to say {says:?}"),
            Duration::from_secs(10),
            || {
                let tree = agent.get_json("/debug/supervision");
                let status = tree_node(&tree, path)["status"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                status.starts_with(says).then_some(())
            },
        );
    }
    assert!(tree_node(&tree, "root/config-watcher")["status"]
        .as_str()
        .unwrap()
        .starts_with("watching "));

    let (status, metrics) = agent.get("/metrics");
    assert_eq!(status, 200);
    assert!(
        metrics.contains(r#"sergeant_actor_up{actor="root/server"} 1"#),
        "{metrics}"
    );
    assert!(metrics.contains("# HELP sergeant_actor_up"), "{metrics}");

    let config = agent.get_json("/debug/config");
    assert_eq!(config["active"]["kubelet"]["readOnlyPort"], 10255);
    assert_eq!(config["active"]["kubelet"]["maxPods"], 110);
    assert_eq!(config["generation"], 1);
    assert!(config["lastError"].is_null());

    agent.signal(Signal::SIGTERM);
    let status = agent.wait_exit(Duration::from_secs(15));
    assert!(status.success(), "exit status {status}:\n{}", agent.log());
    let log = agent.log();
    let stopped_server = log.find("SIGTERM").expect("the signal is logged");
    assert!(log[stopped_server..].contains("stopped cleanly"), "{log}");
}

#[test]
fn sigint_also_stops_the_tree_cleanly() {
    let mut agent = Agent::start(&common::TestConfig::new(), &[]);
    agent.signal(Signal::SIGINT);
    let status = agent.wait_exit(Duration::from_secs(15));
    assert!(status.success(), "exit status {status}:\n{}", agent.log());
    wait_for("the port to close", Duration::from_secs(5), || {
        try_get(&format!("{}/healthz", agent.read_only))
            .is_err()
            .then_some(())
    });
}
