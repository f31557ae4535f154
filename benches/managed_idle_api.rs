//! The API server load of an idle node: how many requests a node agent sends while 110 pods
//! run on it and nothing changes, for sergeant and, in the same run against the same control
//! plane and containerd, the upstream kubelet of the pinned release. The pods look like real
//! pods: each mounts its service-account token (the projected kube-api-access volume with
//! `kube-root-ca.crt`), so each agent keeps a token, a config map and the service variables
//! of every pod fresh in its own way.
//!
//! The requests are counted by the API server, not by the agents: the benchmark runs a
//! kube-apiserver of its own (`tests/control-plane/apiserver.sh`: same binary, etcd and PKI as
//! the shared one) with an audit log of every request made by a node identity, points the agent
//! under measurement at it, and counts the audit events of `system:node:<node>` received in the
//! measured window, by verb and resource. A long-running watch counts once, when it is opened.
//!
//! `SERGEANT_BENCH_ROUNDS` rounds per agent, interleaved (see `common/rounds.rs`), each
//! printed as it comes and their median, min and max per agent at the end. Each round starts
//! its agent afresh, creates the pods, waits until all run, lets the agent settle, then counts
//! for the window. A benchmark: it prints numbers and writes
//! `$SERGEANT_RESULTS_DIR/managed_idle_api.json`, it asserts nothing.
//!
//! Needs SERGEANT_CRI_ENDPOINT and SERGEANT_CONTROL_PLANE_DIR (see tests/bench.sh), on a
//! containerd instance of its own.

#[path = "../tests/common/mod.rs"]
mod common;
/// The name `common/isolation.rs` reaches the test harness by, as in `benches/common`.
use common as harness;
#[allow(dead_code)] // shared with managed_startup, which also counts the pods' processes
#[path = "common/isolation.rs"]
mod isolation;
#[path = "common/managed_agent.rs"]
mod managed_agent;
#[path = "common/rounds.rs"]
mod rounds;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use common::apiserver::PrivateApiserver;
use common::cluster::Cluster;
use common::managed::cri_endpoint;
use common::node::SHELL;
use isolation::Isolation;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use managed_agent::{agent_kinds, wait_ready, Agent};
use rounds::{results_dir, Rounds};
use serde_json::{json, Value};

/// Pods on the node: upstream's default `maxPods`.
const PODS: usize = 110;
/// After the last pod runs and before the window opens: the agent finishes what the start-up
/// left (first status writes, token requests, volume set-ups) and is idle from then on.
const SETTLE: Duration = Duration::from_secs(30);
/// The measured window.
const WINDOW: Duration = Duration::from_secs(120);
/// How long the pods may take to run, or to go.
const PODS_DEADLINE: Duration = Duration::from_secs(300);
/// How long an agent may take to get its Node Ready.
const READY_DEADLINE: Duration = Duration::from_secs(120);
/// The audit events of user `system:node:<node>` received in `[from, to)`, counted by
/// "verb resource[/subresource]".
fn requests_in(
    audit_log: &Path,
    node: &str,
    from: SystemTime,
    to: SystemTime,
) -> BTreeMap<String, u64> {
    let user = format!("system:node:{node}");
    let text = fs::read_to_string(audit_log).unwrap_or_default();
    let mut counts = BTreeMap::new();
    for event in text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    {
        if event["user"]["username"] != user.as_str() {
            continue;
        }
        let Ok(at) = serde_json::from_value::<MicroTime>(event["requestReceivedTimestamp"].clone())
        else {
            continue;
        };
        let at = SystemTime::from(at.0);
        if at < from || at >= to {
            continue;
        }
        let object = &event["objectRef"];
        let mut what = format!(
            "{} {}",
            event["verb"].as_str().unwrap_or("?"),
            object["resource"].as_str().unwrap_or("(no resource)")
        );
        if let Some(sub) = object["subresource"].as_str() {
            what = format!("{what}/{sub}");
        }
        *counts.entry(what).or_insert(0) += 1;
    }
    counts
}

/// How many of the pods labelled `bench=<label>` are Running.
fn pods_running(cluster: &Cluster, label: &str) -> usize {
    let listed = cluster.get_json(&["pods", "-n", "default", "-l", &format!("bench={label}")]);
    listed
        .as_ref()
        .and_then(|l| l["items"].as_array())
        .map_or(0, |items| {
            items
                .iter()
                .filter(|p| p["status"]["phase"] == "Running")
                .count()
        })
}

/// Creates the round's pods bound to `node` and waits until all run; `Err` says how many did.
fn run_pods(cluster: &Cluster, node: &str, label: &str) -> Result<Duration, String> {
    let pods: String = (0..PODS)
        .map(|i| {
            format!(
                "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {label}-{i}\n  namespace: default\n  \
                 labels: {{bench: {label}}}\nspec:\n  nodeName: {node}\n  terminationGracePeriodSeconds: 1\n  \
                 containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n"
            )
        })
        .collect();
    let start = Instant::now();
    cluster.apply(&pods);
    loop {
        let running = pods_running(cluster, label);
        if running == PODS {
            return Ok(start.elapsed());
        }
        if start.elapsed() > PODS_DEADLINE {
            return Err(format!(
                "{running} of {PODS} pods Running after {PODS_DEADLINE:?}"
            ));
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Deletes the round's pods and waits until they are gone.
fn delete_pods(cluster: &Cluster, label: &str) {
    let timeout = format!("{}s", PODS_DEADLINE.as_secs());
    cluster.kubectl(&[
        "delete",
        "pods",
        "-n",
        "default",
        "-l",
        &format!("bench={label}"),
        "--wait",
        "--timeout",
        &timeout,
    ]);
}

/// One round of agent `name` (`binary` for the upstream kubelet) at `apiserver`: its counts,
/// or why it was not measured.
fn round(
    cluster: &Cluster,
    apiserver: &PrivateApiserver,
    audit_log: &Path,
    name: &str,
    binary: Option<&Path>,
    index: usize,
) -> Result<Value, String> {
    let node = format!("idle-{name}").replace('_', "-");
    let label = format!("idle-{node}-{index}");
    cluster.kubectl(&["delete", "node", &node, "--ignore-not-found"]);
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let isolation = Isolation::new(&format!("idle-{name}"), scratch.path());
    let log = results_dir().join(format!("managed_idle_api-{name}-{index}.log"));
    let server = apiserver.url();
    let mut agent = Agent::start(cluster, binary, &node, Some(&server), &isolation, &log);
    let measured = (|| {
        wait_ready(cluster, &node, &mut agent, READY_DEADLINE)?;
        let took = run_pods(cluster, &node, &label)?;
        std::thread::sleep(SETTLE);
        let from = SystemTime::now();
        std::thread::sleep(WINDOW);
        let to = SystemTime::now();
        // The audit backend writes each event as it is received; a second covers its batching.
        std::thread::sleep(Duration::from_secs(1));
        Ok::<_, String>((took, requests_in(audit_log, &node, from, to)))
    })();
    if let Agent::Sergeant(_) = agent {
        let _ = fs::write(&log, agent.log());
    }
    delete_pods(cluster, &label);
    cluster.kubectl(&["delete", "node", &node, "--ignore-not-found"]);
    // The agent stops before its cgroups go.
    drop(agent);
    drop(isolation);
    let (took, counts) = measured?;
    let total: u64 = counts.values().sum();
    let per_second = total as f64 / WINDOW.as_secs_f64();
    println!(
        "{name:>16} round {}: {PODS} pods Running after {:.1} s; idle for {} s: {total} requests ({per_second:.2}/s)",
        index + 1,
        took.as_secs_f64(),
        WINDOW.as_secs()
    );
    for (what, n) in &counts {
        println!("{:>18}{n:>5} {what}", "");
    }
    Ok(json!({
        "running_after_s": took.as_secs_f64(),
        "requests": total,
        "requests_per_second": per_second,
        "by_kind": counts,
        "log": log.display().to_string(),
    }))
}

fn main() {
    let cluster = Cluster::from_env();
    let scratch = tempfile::tempdir().expect("a temporary directory");
    let (apiserver, audit_log) = PrivateApiserver::start_node_audited(&cluster, scratch.path());
    let report = json!({
        "benchmark": "managed_idle_api",
        "runtime": cri_endpoint(),
        "pods": PODS,
        "settle_s": SETTLE.as_secs(),
        "window_s": WINDOW.as_secs(),
    });
    let mut rounds = Rounds::new("managed_idle_api.json", report);
    rounds.run(
        &agent_kinds(),
        |(name, _)| (*name).to_owned(),
        |(name, binary), index| {
            round(
                &cluster,
                &apiserver,
                &audit_log,
                name,
                binary.as_deref(),
                index,
            )
            .unwrap_or_else(|why| {
                println!("{name:>16} round {}: not measured: {why}", index + 1);
                json!({ "error": why })
            })
        },
    );
    rounds.finish();
}
