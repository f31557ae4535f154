//! The node's `Ready` condition carries sergeant's check of the CNI configuration the runtime
//! loads, beside the runtime's own `NetworkReady`: on a containerd of its own, a good network
//! makes the Node Ready; a plugin `type` naming a binary the runtime's binary directory lacks
//! makes it NotReady, naming the file, the field and the binary, while containerd itself still
//! calls its network ready (it does not look for plugin binaries until a pod needs them); the
//! file put right makes it Ready again.

mod common;

use std::fs;
use std::path::PathBuf;

use common::cluster::Cluster;
use common::instance::Instance;
use common::managed::{Managed, DEADLINE};
use common::runtime::Runtime;
use common::{wait_for, TestConfig};
use serde_json::Value;

/// The network file node-env writes for an instance.
const NETWORK: &str = "10-sergeant.conflist";
/// A plugin binary no CNI binary directory holds.
const MISSING: &str = "sergeant-no-such-plugin";

/// The Node's `Ready` condition: its status and message.
fn ready(node: &Managed) -> Option<(String, String)> {
    let object: Value = node.cluster.get_json(&["node", &node.node])?;
    let condition = object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")?
        .clone();
    Some((
        condition["status"].as_str()?.to_owned(),
        condition["message"].as_str().unwrap_or_default().to_owned(),
    ))
}

/// Waits until the Node's `Ready` is `status` with a message `check` accepts.
fn wait_ready(node: &Managed, status: &str, what: &str, check: impl Fn(&str) -> bool) -> String {
    wait_for(what, DEADLINE, || {
        ready(node)
            .filter(|(s, message)| s == status && check(message))
            .map(|(_, message)| message)
    })
}

#[test]
fn a_plugin_binary_the_runtime_lacks_makes_the_node_not_ready_until_fixed() {
    let instance = Instance::up("cni-ready", &[]);
    let file = PathBuf::from(instance.var("CNI_CONF_DIR")).join(NETWORK);
    let good = fs::read_to_string(&file).expect("node-env's network file");
    Cluster::from_env().kubectl(&["delete", "node", "cni-ready", "--ignore-not-found"]);
    let node = Managed::start_on(
        instance.endpoint(),
        "cni-ready",
        TestConfig::new().kubelet("nodeStatusUpdateFrequency: 1s\n"),
    );

    // (a) A good network: Ready, and the adapter says what it checked.
    wait_ready(&node, "True", "the node ready on a good network", |_| true);
    let status = node.agent.child_status("root/runtime/cni-adapter");
    assert!(
        status.contains(NETWORK)
            && status.contains("named by the runtime")
            && status.contains("plugin binaries checked in /usr/lib/cni"),
        "{status}"
    );

    // (b) The bridge plugin's type names a binary that does not exist.
    assert!(good.contains(r#""type": "bridge""#), "{good}");
    let broken = good.replacen(r#""type": "bridge""#, &format!(r#""type": "{MISSING}""#), 1);
    fs::write(&file, broken).expect("the network file broken");
    let message = wait_ready(
        &node,
        "False",
        "the node not ready on the broken network",
        |m| m.contains(MISSING),
    );
    assert!(
        message.contains(
            "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady"
        ) && message.contains(NETWORK)
            && message.contains("plugins[0].type")
            && message.contains(&format!("no plugin binary \"{MISSING}\" in /usr/lib/cni")),
        "{message}"
    );
    // containerd alone still calls the network ready: the verdict is sergeant's.
    assert!(
        Runtime::connect_to(instance.endpoint()).network_ready(),
        "containerd itself should still report NetworkReady=true"
    );
    assert!(
        node.agent.log().contains("CNI network not ready"),
        "the change of verdict is not logged"
    );

    // (c) Put right: Ready again.
    fs::write(&file, &good).expect("the network file restored");
    wait_ready(
        &node,
        "True",
        "the node ready again once the file is fixed",
        |_| true,
    );
}
