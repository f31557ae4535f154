//! The pod startup SLO's measure in managed mode: from a pod's creation in the API server to
//! a watcher seeing it Running, for 1 and 30 pods bound to the node, p50 and p99 — for sergeant
//! and, in the same run on the same control plane and containerd, the upstream kubelet of the
//! pinned release (`UPSTREAM_KUBELET`). A benchmark: it prints numbers and writes
//! `$SERGEANT_RESULTS_DIR/managed_startup.json`, it asserts nothing.
//!
//! Needs SERGEANT_CRI_ENDPOINT and SERGEANT_CONTROL_PLANE_DIR (see tests/bench.sh).

#[path = "../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use common::cluster::Cluster;
use common::managed::{cri_endpoint, Managed};
use common::node::SHELL;
use common::{free_port, wait_for, TestConfig};
use serde_json::json;

/// Pods per round.
const ROUNDS: [usize; 2] = [1, 30];
/// How long a round may take.
const ROUND_DEADLINE: Duration = Duration::from_secs(300);

fn results_dir() -> PathBuf {
    std::env::var_os("SERGEANT_RESULTS_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-results"),
        PathBuf::from,
    )
}

/// The upstream kubelet registered with the control plane; killed when dropped.
struct Upstream {
    child: Child,
    _dir: tempfile::TempDir,
}

impl Upstream {
    fn start(binary: &Path, cluster: &Cluster, node: &str) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let config = dir.path().join("config.yaml");
        std::fs::write(
            &config,
            format!(
                "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\naddress: 127.0.0.1\n\
                 healthzPort: {}\nreadOnlyPort: 0\nport: {}\ncontainerRuntimeEndpoint: {}\ncgroupDriver: cgroupfs\n\
                 failSwapOn: false\nfailCgroupV1: false\nauthentication:\n  anonymous: {{enabled: false}}\n  \
                 x509: {{clientCAFile: {}}}\nauthorization: {{mode: Webhook}}\n",
                free_port(),
                free_port(),
                cri_endpoint(),
                cluster.ca_cert().display()
            ),
        )
        .expect("config written");
        let child = Command::new(binary)
            .arg("--config")
            .arg(&config)
            .arg("--kubeconfig")
            .arg(cluster.node_kubeconfig(node))
            .arg("--root-dir")
            .arg(dir.path().join("root"))
            .args(["--hostname-override", node])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the upstream kubelet starts");
        Self { child, _dir: dir }
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_ready(cluster: &Cluster, node: &str) {
    wait_for(&format!("node {node} Ready"), ROUND_DEADLINE, || {
        let ready = cluster.get_json(&["node", node]).is_some_and(|n| {
            n["status"]["conditions"].as_array().is_some_and(|all| {
                all.iter()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True")
            })
        });
        ready.then_some(())
    });
}

/// Creates `count` pods on `node` and returns, per pod, creation to Running as a watch saw it.
fn round(cluster: &Cluster, node: &str, round: usize, count: usize) -> Vec<Duration> {
    let label = format!("bench-{node}-{round}");
    let watch = cluster.watch_pods(
        &["-l", &format!("bench={label}")],
        "{.metadata.name} {.status.phase}",
    );
    let pods: String = (0..count)
        .map(|i| {
            format!(
                "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {label}-{i}\n  namespace: default\n  labels: {{bench: {label}}}\n\
                 spec:\n  nodeName: {node}\n  automountServiceAccountToken: false\n  terminationGracePeriodSeconds: 1\n  \
                 containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n"
            )
        })
        .collect();
    let created = SystemTime::now();
    cluster.apply(&pods);
    let mut running = BTreeMap::new();
    let deadline = Instant::now() + ROUND_DEADLINE;
    while running.len() < count && Instant::now() < deadline {
        let Ok((at, line)) = watch.events.recv_timeout(Duration::from_secs(1)) else {
            continue;
        };
        if let Some((name, "Running")) = line.split_once(' ') {
            let took = at.duration_since(created).unwrap_or_default();
            running.entry(name.to_owned()).or_insert(took);
        }
    }
    drop(watch);
    cluster.kubectl(&[
        "delete",
        "pods",
        "-n",
        "default",
        "-l",
        &format!("bench={label}"),
        "--wait=true",
    ]);
    running.into_values().collect()
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    // Nearest rank.
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1].as_secs_f64() * 1e3
}

fn main() {
    let cluster = Cluster::from_env();
    let mut kinds: Vec<(&str, Option<PathBuf>)> = vec![("sergeant", None)];
    match std::env::var_os("UPSTREAM_KUBELET") {
        Some(binary) => kinds.push(("upstream_kubelet", Some(PathBuf::from(binary)))),
        None => println!("UPSTREAM_KUBELET not set: the upstream kubelet is not measured"),
    }
    let mut report = json!({"benchmark": "managed_startup", "runtime": cri_endpoint()});
    for (name, binary) in &kinds {
        let node = format!("bench-{name}").replace('_', "-");
        let (_sergeant, _upstream) = match binary {
            None => (
                Some(Managed::start_with(&node, &[], TestConfig::new(), &[])),
                None,
            ),
            Some(binary) => (None, Some(Upstream::start(binary, &cluster, &node))),
        };
        wait_ready(&cluster, &node);
        let mut rounds = Vec::new();
        for (i, &count) in ROUNDS.iter().enumerate() {
            let mut took = round(&cluster, &node, i, count);
            took.sort();
            let (p50, p99) = (percentile(&took, 0.5), percentile(&took, 0.99));
            println!(
                "{name:>16} {count:>3} pods: created → Running seen by a watch: p50 {p50:>7.1} ms, p99 {p99:>7.1} ms ({} of {count} seen)",
                took.len()
            );
            rounds.push(json!({"pods": count, "seen": took.len(), "p50_ms": p50, "p99_ms": p99}));
        }
        report[*name] = json!(rounds);
        cluster.kubectl(&["delete", "node", &node, "--ignore-not-found"]);
    }
    let dir = results_dir();
    std::fs::create_dir_all(&dir).expect("results dir");
    let file = dir.join("managed_startup.json");
    std::fs::write(&file, serde_json::to_string_pretty(&report).expect("json"))
        .expect("results written");
    println!("results: {}", file.display());
}
