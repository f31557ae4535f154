//! Managed mode's node against the real control plane: sergeant registers its Node with the
//! machine's facts, turns it Ready, renews its lease, registers again when the Node is
//! deleted, reports a runtime that went away, and is held to its own Node by NodeRestriction.
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT).

mod common;

use std::path::Path;
use std::time::Duration;

use common::cluster::Cluster;
use common::instance::Instance;
use common::relay::Relay;
use common::{tree_node, wait_for, Agent, TestConfig};
use serde_json::Value;

/// How long registration, readiness or a re-registration may take.
const DEADLINE: Duration = Duration::from_secs(60);

/// How a test's sergeant is started.
#[derive(Default)]
struct Options<'a> {
    /// The node is `node-status-<tag>`.
    tag: &'a str,
    /// The CRI endpoint.
    endpoint: &'a str,
    /// Extra KubeletConfiguration lines.
    kubelet: &'a str,
    /// Extra flags.
    args: &'a [&'a str],
    /// Extra environment.
    env: &'a [(&'a str, &'a str)],
    /// Reach the API server through this loopback port (a [`Relay`]) instead.
    apiserver_port: Option<u16>,
    /// Run the agent on this CPU only (its affinity narrowed before it starts).
    pinned_cpu: Option<usize>,
}

/// A sergeant registered with the control plane under `name`; stops it and deletes its Node
/// and lease when dropped.
struct ManagedNode {
    cluster: Cluster,
    name: String,
    agent: Option<Agent>,
    config: TestConfig,
}

impl ManagedNode {
    /// A sergeant named `node-status-<tag>` on `endpoint`, with its node credentials, the extra
    /// KubeletConfiguration lines `kubelet` and the extra flags `args`.
    fn start(tag: &str, endpoint: &str, kubelet: &str, args: &[&str]) -> Self {
        Self::start_with(&Options {
            tag,
            endpoint,
            kubelet,
            args,
            ..Options::default()
        })
    }

    fn start_with(options: &Options) -> Self {
        let cluster = Cluster::from_env();
        let name = format!("node-status-{}", options.tag);
        let mut kubeconfig = cluster.node_kubeconfig(&name);
        if let Some(port) = options.apiserver_port {
            let text = std::fs::read_to_string(&kubeconfig).expect("the node kubeconfig");
            let text = text.replace(cluster.apiserver(), &format!("https://127.0.0.1:{port}"));
            kubeconfig = kubeconfig.with_file_name(format!("node-{name}-via-{port}.kubeconfig"));
            std::fs::write(&kubeconfig, text).expect("kubeconfig written");
        }
        let kubeconfig = kubeconfig.to_string_lossy().into_owned();
        // A Node left by an earlier, interrupted run would hide the registration.
        cluster.kubectl(&["delete", "node", &name, "--ignore-not-found"]);
        let config = TestConfig::new().kubelet(&format!(
            "containerRuntimeEndpoint: {}\n{}",
            options.endpoint, options.kubelet
        ));
        let mut all = vec!["--hostname-override", &name, "--kubeconfig", &kubeconfig];
        all.extend_from_slice(options.args);
        let agent = match options.pinned_cpu {
            Some(cpu) => Agent::start_pinned(&config, options.env, &all, cpu),
            None => Agent::start_with_args(&config, options.env, &all),
        };
        Self {
            cluster,
            name,
            agent: Some(agent),
            config,
        }
    }

    fn agent(&self) -> &Agent {
        self.agent.as_ref().expect("the agent runs")
    }

    fn node(&self) -> Option<Value> {
        self.cluster.get_json(&["node", &self.name])
    }

    fn lease(&self) -> Option<Value> {
        self.cluster
            .get_json(&["lease", "-n", "kube-node-lease", &self.name])
    }

    /// Waits until the Node's Ready condition has `status` and its message contains
    /// `message`; returns the Node.
    fn wait_ready(&self, status: &str, message: &str) -> Value {
        wait_for(
            &format!("node {} Ready={status} ({message:?})", self.name),
            DEADLINE,
            || {
                let node = self.node()?;
                let ready = condition(&node, "Ready")?;
                (ready["status"] == status
                    && ready["message"]
                        .as_str()
                        .unwrap_or_default()
                        .contains(message))
                .then_some(node)
            },
        )
    }

    /// The node-status actor's line on `/debug/supervision`.
    fn status_line(&self) -> String {
        let tree = self.agent().get_json("/debug/supervision");
        tree_node(&tree, "root/node/node-status")["status"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

impl Drop for ManagedNode {
    fn drop(&mut self) {
        drop(self.agent.take()); // first, so it does not register the Node again
        self.cluster
            .kubectl(&["delete", "node", &self.name, "--ignore-not-found"]);
        self.cluster.kubectl(&[
            "delete",
            "lease",
            "-n",
            "kube-node-lease",
            &self.name,
            "--ignore-not-found",
        ]);
    }
}

fn endpoint() -> String {
    std::env::var("SERGEANT_CRI_ENDPOINT").expect(
        "SERGEANT_CRI_ENDPOINT is not set: run the tests through tests/run.sh, which starts containerd",
    )
}

fn condition<'a>(node: &'a Value, kind: &str) -> Option<&'a Value> {
    node["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
}

/// A Kubernetes quantity ("8029148Ki", "1900m", "2", "10Gi") in thousandths of its unit.
fn milli(quantity: &Value) -> i128 {
    let text = quantity.as_str().expect("a quantity string");
    let suffixes: [(&str, i128); 9] = [
        ("Ki", 1 << 10),
        ("Mi", 1 << 20),
        ("Gi", 1 << 30),
        ("Ti", 1 << 40),
        ("k", 1_000),
        ("M", 1_000_000),
        ("G", 1_000_000_000),
        ("T", 1_000_000_000_000),
        ("m", 0),
    ];
    for (suffix, factor) in suffixes {
        if let Some(number) = text.strip_suffix(suffix) {
            let number: i128 = number.parse().expect("an integer quantity");
            return if factor == 0 {
                number
            } else {
                number * factor * 1000
            };
        }
    }
    text.parse::<i128>().expect("an integer quantity") * 1000
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|t| t.trim().to_owned())
}

fn mem_total_bytes() -> i128 {
    let meminfo = std::fs::read_to_string("/proc/meminfo").expect("/proc/meminfo");
    let kib: i128 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("MemTotal");
    kib * 1024
}

fn filesystem_bytes(dir: &Path) -> i128 {
    let stat = nix::sys::statvfs::statvfs(dir).expect("statvfs");
    i128::from(stat.blocks()) * i128::from(stat.fragment_size())
}

#[test]
fn the_cpu_capacity_is_the_machines_online_cpus_whatever_the_agents_affinity() {
    let node = ManagedNode::start_with(&Options {
        tag: "pinned",
        endpoint: &endpoint(),
        pinned_cpu: Some(0),
        ..Options::default()
    });
    let allowed = std::fs::read_to_string(format!("/proc/{}/status", node.agent().pid()))
        .expect("the agent's /proc status");
    assert!(
        allowed.lines().any(|l| l == "Cpus_allowed_list:\t0"),
        "the agent runs on CPU 0 only: {allowed}"
    );
    let object = node.wait_ready("True", "kubelet is posting ready status");
    let capacity = &object["status"]["capacity"];
    assert_eq!(
        milli(&capacity["cpu"]),
        i128::from(common::machine::online_cpus()) * 1000,
        "the machine's online CPUs, not the one the agent may use: {capacity}"
    );
}

#[test]
fn the_node_registers_ready_with_the_machines_capacity_allocatable_and_info() {
    let node = ManagedNode::start(
        "facts",
        &endpoint(),
        "maxPods: 37\nkubeReserved:\n  cpu: 100m\n  memory: 64Mi\n",
        &["--node-ip", "192.0.2.10"],
    );
    let object = node.wait_ready("True", "kubelet is posting ready status");
    let ready = condition(&object, "Ready").unwrap();
    assert_eq!(ready["reason"], "KubeletReady", "{ready}");
    for (kind, reason) in [
        ("MemoryPressure", "KubeletHasSufficientMemory"),
        ("DiskPressure", "KubeletHasNoDiskPressure"),
        ("PIDPressure", "KubeletHasSufficientPID"),
    ] {
        let pressure = condition(&object, kind).unwrap_or_else(|| panic!("{kind}: {object}"));
        assert_eq!(
            (&pressure["status"], &pressure["reason"]),
            (&Value::from("False"), &Value::from(reason))
        );
    }

    let labels = &object["metadata"]["labels"];
    assert_eq!(labels["kubernetes.io/hostname"], node.name.as_str());
    assert_eq!(labels["kubernetes.io/os"], "linux");
    if cfg!(target_arch = "x86_64") {
        assert_eq!(labels["kubernetes.io/arch"], "amd64");
    }

    let status = &object["status"];
    let (capacity, allocatable) = (&status["capacity"], &status["allocatable"]);
    let cpus = i128::from(common::machine::online_cpus());
    assert_eq!(milli(&capacity["cpu"]), cpus * 1000, "{capacity}");
    assert_eq!(
        milli(&allocatable["cpu"]),
        cpus * 1000 - 100,
        "{allocatable}"
    );
    let memory = mem_total_bytes();
    assert_eq!(milli(&capacity["memory"]), memory * 1000, "{capacity}");
    assert_eq!(
        milli(&allocatable["memory"]),
        (memory - (64 << 20) - (100 << 20)) * 1000,
        "kubeReserved 64Mi and memory.available<100Mi held back: {allocatable}"
    );
    let storage = filesystem_bytes(node.agent().dir.path());
    assert_eq!(milli(&capacity["ephemeral-storage"]), storage * 1000);
    // The test agents' nodefs.available threshold (common::TEST_EVICTION_HARD): 512Mi.
    assert!(common::TEST_EVICTION_HARD.contains("nodefs.available: 512Mi"));
    assert_eq!(
        milli(&allocatable["ephemeral-storage"]),
        (storage - (512 << 20)) * 1000,
        "nodefs.available<512Mi held back: {allocatable}"
    );
    assert_eq!(milli(&capacity["pods"]), 37_000);
    assert_eq!(milli(&allocatable["pods"]), 37_000);

    let addresses = status["addresses"].as_array().unwrap();
    assert!(
        addresses.contains(&serde_json::json!({"type": "InternalIP", "address": "192.0.2.10"})),
        "{addresses:?}"
    );
    assert!(
        addresses.contains(&serde_json::json!({"type": "Hostname", "address": node.name})),
        "{addresses:?}"
    );

    let info = &status["nodeInfo"];
    assert_eq!(info["kubeletVersion"], "v1.37.2");
    assert!(
        info["containerRuntimeVersion"]
            .as_str()
            .unwrap_or_default()
            .starts_with("containerd://"),
        "{info}"
    );
    assert_eq!(
        info["bootID"].as_str(),
        read_trimmed("/proc/sys/kernel/random/boot_id").as_deref()
    );
    assert_eq!(
        info["kernelVersion"].as_str(),
        read_trimmed("/proc/sys/kernel/osrelease").as_deref()
    );
    if let Some(machine_id) = read_trimmed("/etc/machine-id") {
        assert_eq!(info["machineID"], machine_id.as_str());
    }
    assert!(!info["osImage"].as_str().unwrap_or_default().is_empty());
    assert_eq!(info["operatingSystem"], "linux");
    assert_eq!(
        status["daemonEndpoints"]["kubeletEndpoint"]["Port"],
        node.config.port
    );

    let sizes: Vec<i64> = status["images"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| i["sizeBytes"].as_i64().unwrap_or_default())
        .collect();
    assert!(sizes.len() <= 50, "{sizes:?}");
    assert!(
        sizes.windows(2).all(|w| w[0] >= w[1]),
        "largest first: {sizes:?}"
    );

    let line = wait_for("the status line to say Ready", DEADLINE, || {
        let line = node.status_line();
        line.contains("; Ready;").then_some(line)
    });
    assert!(
        line.starts_with(&format!("registered as node/{}", node.name)),
        "{line}"
    );
    let (_, metrics) = node.agent().get("/metrics");
    assert!(
        metrics.contains(&format!("kubelet_node_name{{node=\"{}\"}} 1", node.name)),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"sergeant_node_status_updates_total{result="registered"} 1"#),
        "{metrics}"
    );
}

#[test]
fn the_lease_is_renewed_and_a_deleted_node_registers_again() {
    let node = ManagedNode::start(
        "lease",
        &endpoint(),
        "nodeLeaseDurationSeconds: 8\nnodeStatusUpdateFrequency: 2s\n",
        &[],
    );
    let first = node.wait_ready("True", "");
    let uid = first["metadata"]["uid"].as_str().unwrap().to_owned();
    let internal = first["status"]["addresses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["type"] == "InternalIP")
        .and_then(|a| a["address"].as_str())
        .map(|a| a.parse::<std::net::Ipv4Addr>().expect("an IPv4 address"))
        .expect("an InternalIP from the default route");
    assert!(!internal.is_loopback(), "{internal}");

    let lease = wait_for("the lease, owned by the Node", DEADLINE, || {
        let lease = node.lease()?;
        (lease["metadata"]["ownerReferences"][0]["uid"] == uid.as_str()).then_some(lease)
    });
    assert_eq!(lease["spec"]["holderIdentity"], node.name.as_str());
    assert_eq!(lease["spec"]["leaseDurationSeconds"], 8);
    assert_eq!(lease["metadata"]["ownerReferences"][0]["kind"], "Node");
    let renewed = lease["spec"]["renewTime"].as_str().unwrap().to_owned();
    wait_for(
        "renewTime to advance (every 2s)",
        Duration::from_secs(15),
        || {
            let lease = node.lease()?;
            (lease["spec"]["renewTime"].as_str()? > renewed.as_str()).then_some(())
        },
    );
    // As upstream's lease controller: a renewal starts from the lease the last one got back,
    // one request each; the lease is read only at the start (and after a conflict).
    let lease_requests = |verb: &str| {
        let (_, metrics) = node.agent().get("/metrics");
        metrics
            .lines()
            .filter(|l| l.starts_with("sergeant_api_requests_total{"))
            .filter(|l| {
                l.contains("resource=\"leases\"") && l.contains(&format!("verb=\"{verb}\""))
            })
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>()
    };
    let updates = wait_for("three lease renewals", Duration::from_secs(15), || {
        let updates = lease_requests("update");
        (updates >= 3.0).then_some(updates)
    });
    assert_eq!(
        lease_requests("get"),
        1.0,
        "{updates} renewals read the lease once"
    );

    let (deleted, out) = node.cluster.kubectl(&["delete", "node", &node.name]);
    assert!(deleted, "{out}");
    let again = wait_for("the Node registered again", DEADLINE, || {
        let again = node.node()?;
        (again["metadata"]["uid"] != uid.as_str()).then_some(again)
    });
    let new_uid = again["metadata"]["uid"].as_str().unwrap().to_owned();
    node.wait_ready("True", "");
    wait_for("the lease to be owned by the new Node", DEADLINE, || {
        let lease = node.lease()?;
        (lease["metadata"]["ownerReferences"][0]["uid"] == new_uid.as_str()).then_some(())
    });
}

#[test]
fn node_restriction_keeps_a_node_to_its_own_status() {
    let node = ManagedNode::start("restricted", &endpoint(), "", &[]);
    let mut object = node.wait_ready("True", "");
    // A whole-status update (kubectl has no raw PATCH, and its `patch --subresource` reads
    // `nodes/status`, which no node may), unconditional: no resourceVersion.
    object["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    object["status"]["conditions"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "type": "NetworkUnavailable", "status": "False",
            "reason": "TestUpdate", "message": "set by the test"
        }));
    let file = tempfile::NamedTempFile::new().expect("a temp file");
    std::fs::write(file.path(), object.to_string()).expect("node written");
    let path = file.path().to_string_lossy().into_owned();
    let uri = format!("/api/v1/nodes/{}/status", node.name);
    let args = ["replace", "--raw", &uri, "-f", &path];
    let other = node.cluster.node_kubeconfig("node-status-intruder");
    let (ok, out) = node.cluster.kubectl_as(&other, &args);
    assert!(!ok, "another node updated {}'s status: {out}", node.name);
    assert!(
        out.contains("Forbidden") || out.contains("forbidden"),
        "{out}"
    );
    // The node lifecycle controller may change the Node's taints between the read above and
    // this write (it lifts `not-ready` once the node is Ready), and a node may not write
    // taints: then the write is made again from a fresh read.
    let own = node.cluster.node_kubeconfig(&node.name);
    wait_for("the node's own status update", DEADLINE, || {
        let (ok, out) = node.cluster.kubectl_as(&own, &args);
        if !ok && out.contains("not allowed to modify taints") {
            let mut fresh = node.node().expect("the node");
            fresh["metadata"]
                .as_object_mut()
                .unwrap()
                .remove("resourceVersion");
            fresh["status"]["conditions"] = object["status"]["conditions"].clone();
            std::fs::write(file.path(), fresh.to_string()).expect("node written");
            return None;
        }
        assert!(ok, "a node may update its own status: {out}");
        Some(())
    });
    let updated = node.node().expect("the node");
    assert_eq!(
        condition(&updated, "NetworkUnavailable").map(|c| &c["reason"]),
        Some(&Value::from("TestUpdate"))
    );
}

#[test]
fn a_runtime_that_goes_away_makes_the_node_not_ready_until_it_returns() {
    let instance = Instance::up("ns", &[]);
    let node = ManagedNode::start(
        "runtime",
        instance.endpoint(),
        "nodeStatusUpdateFrequency: 2s\n",
        &[],
    );
    node.wait_ready("True", "kubelet is posting ready status");
    instance.stop();
    let down = node.wait_ready("False", "container runtime is down");
    assert_eq!(
        condition(&down, "Ready").unwrap()["reason"],
        "KubeletNotReady"
    );
    instance.restart();
    node.wait_ready("True", "kubelet is posting ready status");
}

#[cfg(feature = "failpoints")]
#[test]
fn a_crash_of_node_status_restarts_it_alone_and_the_node_stays_registered() {
    let node = ManagedNode::start_with(&Options {
        tag: "crash",
        endpoint: &endpoint(),
        kubelet: "nodeStatusUpdateFrequency: 1s\n",
        env: &[(
            "FAILPOINTS",
            "node-status::tick=3*off->1*panic(injected node-status crash)",
        )],
        ..Options::default()
    });
    let uid = node.wait_ready("True", "")["metadata"]["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    let tree = wait_for("node-status to restart", DEADLINE, || {
        let tree = node.agent().get_json("/debug/supervision");
        (tree_node(&tree, "root/node/node-status")["restarts"] == 1).then_some(tree)
    });
    let failure = tree_node(&tree, "root/node/node-status")["last_failure"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(failure.contains("injected node-status crash"), "{failure}");
    assert_eq!(tree_node(&tree, "root/node/gc")["restarts"], 0);
    wait_for("the restarted actor to report Ready", DEADLINE, || {
        node.status_line().contains("; Ready;").then_some(())
    });
    let again = node.wait_ready("True", "");
    assert_eq!(
        again["metadata"]["uid"],
        uid.as_str(),
        "the same Node, not a new one"
    );
}

#[test]
fn status_and_lease_resume_when_the_api_server_comes_back() {
    let cluster = Cluster::from_env();
    let mut relay = Relay::to_apiserver(&cluster);
    let node = ManagedNode::start_with(&Options {
        tag: "away",
        endpoint: &endpoint(),
        kubelet: "nodeLeaseDurationSeconds: 4\nnodeStatusUpdateFrequency: 1s\n",
        apiserver_port: Some(relay.port),
        ..Options::default()
    });
    node.wait_ready("True", "");
    wait_for("the first renewal", DEADLINE, || node.lease());

    relay.cut();
    let line = wait_for(
        "node-status to say it cannot reach the API server",
        DEADLINE,
        || {
            let line = node.status_line();
            line.contains("last error").then_some(line)
        },
    );
    assert!(line.contains("node/node-status-away"), "{line}");
    // The lease is renewed on its own clock (every second here): wait until it, too, has met
    // the cut.
    wait_for("a lease renewal to fail", DEADLINE, || {
        let (_, metrics) = node.agent().get("/metrics");
        metrics
            .contains(r#"sergeant_node_lease_renewals_total{result="error"}"#)
            .then_some(())
    });
    let renewed = node.lease().expect("the lease")["spec"]["renewTime"]
        .as_str()
        .unwrap()
        .to_owned();

    relay.resume();
    wait_for("the lease renewed again", DEADLINE, || {
        let lease = node.lease()?;
        (lease["spec"]["renewTime"].as_str()? > renewed.as_str()).then_some(())
    });
    wait_for("the status line to clear its error", DEADLINE, || {
        let line = node.status_line();
        (line.contains("; Ready;") && !line.contains("last error")).then_some(())
    });
    let tree = node.agent().get_json("/debug/supervision");
    assert_eq!(
        tree_node(&tree, "root/node/node-status")["restarts"],
        0,
        "retried with back-off, not restarted"
    );
}
