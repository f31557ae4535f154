//! The node's pod CIDR reaches the runtime (CRI `UpdateRuntimeConfig`), as upstream's kubelet
//! hands it: the configuration's `podCIDR` at start, the Node's `spec.podCIDRs` in managed
//! mode. The runtime is a private containerd with no CNI network of its own
//! (`node-env.sh up --cni-from-pod-cidr`): containerd renders its network from a template only
//! once it is told the pod CIDR, so a pod gets an address — from that range — only if sergeant
//! told it.

mod common;

use std::fs;
use std::path::Path;

use common::cluster::Cluster;
use common::instance::Instance;
use common::managed::{sleeper, Managed, DEADLINE};
use common::node::{phase, sleeper as static_sleeper, Node};
use common::{wait_for, Agent, TestConfig};
use serde_json::Value;

/// The file containerd renders its CNI network into.
const RENDERED: &str = "10-containerd-net.conflist";

/// An instance whose network comes from the pod CIDR, with no network rendered yet (a file
/// left by an interrupted run is removed, so containerd renders what it is told now).
fn runtime(name: &'static str) -> Instance {
    let instance = Instance::up(name, &["--cni-from-pod-cidr"]);
    let rendered = Path::new(instance.var("CNI_CONF_DIR")).join(RENDERED);
    if rendered.exists() {
        fs::remove_file(&rendered).expect("the old rendered network removed");
    }
    instance
}

/// The network containerd rendered, once it exists.
fn rendered_network(instance: &Instance) -> String {
    let rendered = Path::new(instance.var("CNI_CONF_DIR")).join(RENDERED);
    wait_for("containerd to render its CNI network", DEADLINE, || {
        fs::read_to_string(&rendered).ok()
    })
}

/// The runtime adapter's line in the supervision tree.
fn adapter_status(agent: &Agent) -> String {
    agent.child_status("root/runtime/runtime-adapter")
}

#[test]
fn the_configured_pod_cidr_gives_pods_their_addresses() {
    let instance = runtime("cidr-static");
    let node = Node::start_on(
        instance.endpoint(),
        "pod-cidr-static",
        "podCIDR: 10.244.7.0/24\n",
        &[],
    );
    node.write("web.yaml", &static_sleeper("web"));
    let pod = node.wait_pod("web", "running with an address", |p| {
        phase(p) == "Running" && p["status"]["podIP"].is_string()
    });
    let ip = pod["status"]["podIP"].as_str().unwrap_or_default();
    assert!(
        ip.starts_with("10.244.7."),
        "pod IP {ip} is outside 10.244.7.0/24"
    );
    assert!(
        rendered_network(&instance).contains("\"subnet\": \"10.244.7.0/24\""),
        "containerd rendered another range"
    );
    let status = adapter_status(&node.agent);
    assert!(status.contains("pod CIDR 10.244.7.0/24"), "{status}");
    assert!(
        node.agent.log().contains("pod CIDR handed to the runtime"),
        "the hand-over is not logged"
    );
}

#[test]
fn the_nodes_pod_cidr_reaches_the_runtime_in_managed_mode() {
    let instance = runtime("cidr-node");
    // A Node left by an interrupted run keeps its pod CIDR (immutable once set).
    Cluster::from_env().kubectl(&["delete", "node", "pod-cidr-node", "--ignore-not-found"]);
    let node = Managed::start_on(
        instance.endpoint(),
        "pod-cidr-node",
        TestConfig::new().kubelet("nodeStatusUpdateFrequency: 1s\n"),
    );
    let get_node = || node.cluster.get_json(&["node", &node.node]);
    let ready = |n: &Value| {
        n["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
            .map(|c| {
                (
                    c["status"].as_str() == Some("True"),
                    c["message"].to_string(),
                )
            })
    };
    wait_for(
        "the node registered, not ready for want of a network",
        DEADLINE,
        || {
            get_node()
                .and_then(|n| ready(&n))
                .filter(|(ready, message)| !ready && message.contains("network not ready"))
        },
    );
    let (patched, out) = node.cluster.kubectl(&[
        "patch",
        "node",
        &node.node,
        "--type=merge",
        "-p",
        r#"{"spec":{"podCIDR":"10.244.8.0/24","podCIDRs":["10.244.8.0/24"]}}"#,
    ]);
    assert!(patched, "kubectl patch node: {out}");
    wait_for(
        "the node ready once its runtime has a network",
        DEADLINE,
        || {
            get_node()
                .and_then(|n| ready(&n))
                .filter(|(ready, _)| *ready)
        },
    );
    node.create("web", &sleeper());
    let pod = node.wait_pod("web", "running with an address", |p| {
        p["status"]["phase"] == "Running" && p["status"]["podIP"].is_string()
    });
    let ip = pod["status"]["podIP"].as_str().unwrap_or_default();
    assert!(
        ip.starts_with("10.244.8."),
        "pod IP {ip} is outside 10.244.8.0/24"
    );
    assert!(rendered_network(&instance).contains("\"subnet\": \"10.244.8.0/24\""));
}

#[test]
fn a_runtime_swapped_in_is_told_the_pod_cidr_and_the_fake_hands_out_its_addresses() {
    let main = std::env::var("SERGEANT_CRI_ENDPOINT")
        .expect("SERGEANT_CRI_ENDPOINT is not set: run the tests through tests/run.sh");
    let manifests = tempfile::tempdir().expect("a manifest dir");
    let kubelet = format!(
        "staticPodPath: {}\npodCIDR: 10.244.9.0/24\ncontainerRuntimeEndpoint: {main}\n",
        manifests.path().display()
    );
    let base = TestConfig::new();
    let agent = Agent::start(&base.reconfigured(kubelet.clone(), "cri"), &[]);
    let told = |adapter: &str| {
        let wanted = format!("serving {adapter} at {main}");
        wait_for(&format!("{adapter} told the pod CIDR"), DEADLINE, || {
            let status = adapter_status(&agent);
            (status.starts_with(&wanted) && status.contains("pod CIDR 10.244.9.0/24")).then_some(())
        });
    };
    told("cri");
    fs::write(
        &agent.config_path,
        base.reconfigured(kubelet, "fake").render(),
    )
    .expect("config edited");
    told("fake");
    fs::write(manifests.path().join("web.yaml"), static_sleeper("web")).expect("manifest");
    let ip = wait_for(
        "the pod running on the fake with an address",
        DEADLINE,
        || {
            let pods = agent.get_json("/pods");
            pods["items"].as_array()?.iter().find_map(|p| {
                let running = p["status"]["phase"] == "Running";
                let named = p["metadata"]["name"].as_str()?.starts_with("web-");
                p["status"]["podIP"]
                    .as_str()
                    .filter(|_| running && named)
                    .map(str::to_owned)
            })
        },
    );
    assert!(
        ip.starts_with("10.244.9."),
        "pod IP {ip} is outside 10.244.9.0/24"
    );
}
