//! The kubelet-managed `/etc/hosts` on the real containerd: each container of a static pod
//! prints its `/etc/hosts` as its termination message, and the test compares it with what
//! upstream writes for the pod's IP, hostname, subdomain and host aliases, on the pod network
//! and on the host network, and checks that a container mounting its own `/etc/hosts` keeps it
//! (and that `/etc/resolv.conf` follows clusterDNS and clusterDomain).
//!
//! Needs the private containerd `tests/run.sh` starts (SERGEANT_CRI_ENDPOINT) and its local
//! registry with the test images.

mod common;

use std::fs;

use common::node::{container, manifest, Node, SHELL};
use serde_json::Value;

/// A container that writes the `file` it sees to its termination message and exits.
fn show(name: &str, file: &str) -> String {
    format!(
        "  - name: {name}\n    image: {SHELL}\n    command: [sh, -c, 'cat {file} > /dev/termination-log']\n"
    )
}

/// Runs the run-once pod `name` with `spec` and returns it once every container in
/// `containers` has exited, with their termination messages in that order.
fn files_seen(node: &Node, name: &str, spec: &str, containers: &[&str]) -> (Value, Vec<String>) {
    node.write(&format!("{name}.yaml"), &manifest(name, spec));
    let pod = node.wait_pod(name, "every container exited", |p| {
        containers
            .iter()
            .all(|c| container(p, "containerStatuses", c)["state"]["terminated"].is_object())
    });
    let messages = containers
        .iter()
        .map(|c| {
            let terminated = &container(&pod, "containerStatuses", c)["state"]["terminated"];
            assert_eq!(terminated["exitCode"], 0, "{c}: {pod}");
            terminated["message"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    (pod, messages)
}

#[test]
fn pod_network_containers_see_their_fqdn_aliases_and_cluster_dns_or_their_own_hosts_file() {
    let node = Node::start_with(
        "hosts",
        "clusterDNS: [10.96.0.10]\nclusterDomain: cluster.local\n",
    );
    let own = tempfile::NamedTempFile::new().expect("a hosts file of the test's own");
    fs::write(own.path(), "192.0.2.7 mine\n").expect("own hosts file written");
    let spec = format!(
        "  restartPolicy: Never\n  hostname: web\n  subdomain: sub\n  hostAliases:\n  \
         - ip: 10.1.2.3\n    hostnames: [foo.remote, bar.remote]\n  containers:\n{}{}{}\
         \x20   volumeMounts:\n    - {{name: own, mountPath: /etc/hosts}}\n  volumes:\n  \
         - name: own\n    hostPath:\n      path: {}\n      type: File\n",
        show("resolver", "/etc/resolv.conf"),
        show("managed", "/etc/hosts"),
        show("own", "/etc/hosts"),
        own.path().display()
    );
    let (pod, seen) = files_seen(&node, "hosts", &spec, &["managed", "own", "resolver"]);
    let ip = pod["status"]["podIP"].as_str().expect("a pod IP");
    assert_eq!(
        seen[0],
        format!(
            "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n\
             ::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\n\
             fe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n\
             {ip}\tweb.sub.default.svc.cluster.local\tweb\n\n\
             # Entries added by HostAliases.\n10.1.2.3\tfoo.remote\tbar.remote\n"
        ),
        "{pod}"
    );
    assert_eq!(seen[1], "192.0.2.7 mine\n", "{pod}");
    assert_eq!(
        seen[2],
        "search default.svc.cluster.local svc.cluster.local cluster.local\n\
         nameserver 10.96.0.10\noptions ndots:5\n",
        "{pod}"
    );
}

#[test]
fn a_host_network_pod_sees_the_nodes_hosts_file_and_its_aliases() {
    let node = Node::start("hosts-hostnet");
    let spec = format!(
        "  restartPolicy: Never\n  hostNetwork: true\n  hostAliases:\n  \
         - ip: 10.1.2.3\n    hostnames: [db]\n  containers:\n{}",
        show("managed", "/etc/hosts")
    );
    let (pod, seen) = files_seen(&node, "hostnet", &spec, &["managed"]);
    let node_hosts = fs::read_to_string("/etc/hosts").expect("the node's /etc/hosts");
    assert_eq!(
        seen[0],
        format!(
            "# Kubernetes-managed hosts file (host network).\n{node_hosts}\n\
             # Entries added by HostAliases.\n10.1.2.3\tdb\n"
        ),
        "{pod}"
    );
}

/// `spec.hostnameOverride` (upstream's "Override hostname of Pod" specs): it is the sandbox's
/// hostname and the pod IP's only name in the hosts file, over `hostname` and `subdomain`.
#[test]
fn a_hostname_override_is_the_hostname_and_the_pod_ips_name() {
    let node = Node::start_with("hosts-override", "clusterDomain: cluster.local\n");
    let spec = "  restartPolicy: Never\n  hostname: custom-host\n  subdomain: t\n  \
                hostnameOverride: override.example.host\n  containers:\n  \
                - name: show\n    image: SHELL\n    \
                command: [sh, -c, 'hostname > /dev/termination-log; cat /etc/hosts >> /dev/termination-log']\n"
        .replace("SHELL", SHELL);
    let (pod, seen) = files_seen(&node, "override", &spec, &["show"]);
    let ip = pod["status"]["podIP"].as_str().expect("a pod IP");
    let (hostname, hosts) = seen[0].split_once('\n').expect("two parts");
    assert_eq!(hostname, "override.example.host", "{pod}");
    assert!(
        hosts.ends_with(&format!("\n{ip}\toverride.example.host\n")),
        "{hosts}"
    );
}
