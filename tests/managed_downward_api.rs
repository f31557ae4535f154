//! The downward API of pods from the real API server, on the real containerd, where upstream's
//! node conformance suite found sergeant wrong:
//! - a `resourceFieldRef` without a divisor: the API server stores the unset divisor as `"0"`,
//!   which upstream reads as 1, in the environment and in downwardAPI volume files alike
//!   ("Downward API volume should provide container's cpu limit" and its siblings);
//! - the node's address: a node started without `--node-ip` gives its pods `status.hostIP`,
//!   the Node's `InternalIP`, and the same address as an env `fieldRef: status.hostIP`
//!   ("Pods should get a host IP", "Downward API should provide host IP as an env var").
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT). Container output is read with `kubectl logs`, so the API server
//! reaches the node's kubelet API as in `kubectl_node_api.rs`.

mod common;

use common::managed::{Managed, DEADLINE};
use common::node::{container, phase, SHELL};
use common::wait_for;
use serde_json::Value;

/// A managed node named `dapi-<tag>` without `--node-ip`, whose kubelet API the API server
/// can reach (for `kubectl logs`).
fn node(tag: &str) -> Managed {
    Managed::reachable(&format!("dapi-{tag}"), &[], "")
}

/// The first line pod `name` printed.
fn first_line(node: &Managed, name: &str) -> String {
    wait_for(&format!("{name}: its first line"), DEADLINE, || {
        let (ok, out) = node.cluster.kubectl(&["logs", name, "-n", "default"]);
        (ok && out.ends_with('\n')).then(|| out.lines().next().unwrap_or_default().to_owned())
    })
}

/// Waits until pod `name` runs, saying why its container waits when it does not.
fn wait_running(node: &Managed, name: &str) -> Value {
    wait_for(&format!("{name}: Running"), DEADLINE, || {
        let pod = node.pod(name)?;
        if phase(&pod) == "Running" {
            return Some(pod);
        }
        let waiting = &container(&pod, "containerStatuses", "main")["state"]["waiting"];
        if waiting["reason"] == "CreateContainerConfigError" {
            panic!("{name}: CreateContainerConfigError: {}", waiting["message"]);
        }
        None
    })
}

#[test]
fn a_resource_field_ref_without_a_divisor_reads_as_divisor_one() {
    let node = node("divisor");
    let item = |path: &str, resource: &str| {
        format!("      - path: {path}\n        resourceFieldRef: {{containerName: main, resource: {resource}}}\n")
    };
    node.create(
        "divisor",
        &format!(
            "  containers:\n  - name: main\n    image: {SHELL}\n    \
             command: [sh, -c, 'echo \"$CPU_LIMIT $MEMORY_REQUEST $(cat /info/cpu_limit) $(cat /info/memory_limit)\"; sleep 3600']\n    \
             resources:\n      requests: {{cpu: 250m, memory: 32Mi}}\n      limits: {{cpu: 1250m, memory: 64Mi}}\n    \
             env:\n    - name: CPU_LIMIT\n      valueFrom:\n        resourceFieldRef: {{resource: limits.cpu}}\n    \
             - name: MEMORY_REQUEST\n      valueFrom:\n        resourceFieldRef: {{resource: requests.memory}}\n    \
             volumeMounts:\n    - {{name: info, mountPath: /info}}\n  \
             volumes:\n  - name: info\n    downwardAPI:\n      items:\n{}{}",
            item("cpu_limit", "limits.cpu"),
            item("memory_limit", "limits.memory"),
        ),
    );
    let pod = node.pod("divisor").expect("the pod was created");
    let env = &pod["spec"]["containers"][0]["env"];
    assert_eq!(
        env[0]["valueFrom"]["resourceFieldRef"]["divisor"], "0",
        "the API server stores an unset divisor as \"0\": {env}"
    );
    let volume = &pod["spec"]["volumes"][0]["downwardAPI"]["items"][0];
    assert_eq!(
        volume["resourceFieldRef"]["divisor"], "0",
        "in a volume item too: {volume}"
    );

    wait_running(&node, "divisor");
    // 1250m rounds up to 2 cpus; 32Mi and 64Mi in bytes.
    assert_eq!(
        first_line(&node, "divisor"),
        format!("2 {} 2 {}", 32 << 20, 64 << 20),
        "env CPU_LIMIT, MEMORY_REQUEST, then the files cpu_limit and memory_limit"
    );
}

#[test]
fn pods_get_the_node_address_as_host_ip_and_in_their_environment() {
    let node = node("hostip");
    node.create(
        "hostip",
        &format!(
            "  containers:\n  - name: main\n    image: {SHELL}\n    \
             command: [sh, -c, 'echo \"HOST_IP=$HOST_IP\"; sleep 3600']\n    \
             env:\n    - name: HOST_IP\n      valueFrom:\n        fieldRef: {{fieldPath: status.hostIP}}\n"
        ),
    );
    let pod = wait_running(&node, "hostip");
    let node_object = node
        .cluster
        .get_json(&["node", &node.node])
        .expect("the Node object");
    let internal_ip = node_object["status"]["addresses"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["type"] == "InternalIP")
        .and_then(|a| a["address"].as_str())
        .unwrap_or_else(|| panic!("the Node has an InternalIP: {node_object}"))
        .to_owned();

    let host_ip = pod["status"]["hostIP"].as_str().unwrap_or_default();
    assert_eq!(host_ip, internal_ip, "status.hostIP: {}", pod["status"]);
    assert_eq!(
        pod["status"]["hostIPs"][0]["ip"].as_str(),
        Some(internal_ip.as_str()),
        "status.hostIPs: {}",
        pod["status"]
    );
    assert_eq!(
        first_line(&node, "hostip"),
        format!("HOST_IP={internal_ip}")
    );
}

#[test]
fn a_host_network_pod_is_told_the_node_address_as_its_pod_ip() {
    let node = node("hostnet");
    node.create(
        "hostnet-env",
        &format!(
            "  hostNetwork: true\n  containers:\n  - name: main\n    image: {SHELL}\n    \
             command: [sh, -c, 'echo \"POD_IP=$POD_IP HOST_IP=$HOST_IP\"; sleep 3600']\n    \
             env:\n    - name: POD_IP\n      valueFrom:\n        fieldRef: {{fieldPath: status.podIP}}\n    \
             - name: HOST_IP\n      valueFrom:\n        fieldRef: {{fieldPath: status.hostIP}}\n"
        ),
    );
    let pod = wait_running(&node, "hostnet-env");
    let host_ip = pod["status"]["hostIP"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(!host_ip.is_empty(), "{}", pod["status"]);
    assert_eq!(
        pod["status"]["podIP"],
        host_ip.as_str(),
        "{}",
        pod["status"]
    );
    assert_eq!(
        first_line(&node, "hostnet-env"),
        format!("POD_IP={host_ip} HOST_IP={host_ip}"),
        "as upstream's Downward API spec for host-network pods"
    );
}
