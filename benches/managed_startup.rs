//! The pod startup SLO's measure in managed mode: from a pod's creation in the API server to
//! a watcher seeing it Running, for 1 and 30 pods bound to the node, p50 and p99 — for sergeant
//! and, in the same run on the same control plane and containerd, the upstream kubelet of the
//! pinned release (`UPSTREAM_KUBELET`). For sergeant also the status path alone: from CRI
//! StartContainer returning (its "container started" log line) to the watcher seeing the pod
//! Running (the status manager's target is 100 ms). A benchmark: it prints numbers and writes
//! `$SERGEANT_RESULTS_DIR/managed_startup.json`, it asserts nothing.
//!
//! A round registers a fresh agent as a Node, waits until the Node is Ready, runs one
//! unmeasured warm-up pod, then a batch of 1 pod and one of 30, each deleted (and its
//! containers stopped) before the next. `SERGEANT_BENCH_ROUNDS` rounds per agent, interleaved
//! (see `common/rounds.rs`), each printed as it comes and their median, min and max per agent
//! at the end.
//!
//! Each agent gets a cgroup root and a pod logs directory of its own (see
//! `common/isolation.rs`: with the defaults the upstream kubelet kills the pods of every other
//! agent on the machine), and its log goes to
//! `$SERGEANT_RESULTS_DIR/managed_startup-<agent>-<round>.log`. When a batch does not see all
//! its pods Running, or an agent does not get its Node Ready, the benchmark says why (the
//! Node's conditions and taints, the pods' states, their events, the agent's last errors) on
//! stdout and in the results file.
//!
//! Needs SERGEANT_CRI_ENDPOINT and SERGEANT_CONTROL_PLANE_DIR (see tests/bench.sh). The
//! containerd instance must be one of its own (`node-env.sh up --instance bench`): the upstream
//! kubelet removes every container on it that it does not know.

#[path = "../tests/common/mod.rs"]
mod common;
/// The name `common/isolation.rs` reaches the test harness by, as in `benches/common`.
use common as harness;
#[path = "common/isolation.rs"]
mod isolation;
#[path = "common/managed_agent.rs"]
mod managed_agent;
#[path = "common/rounds.rs"]
mod rounds;
#[path = "common/stats.rs"]
mod stats;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use common::cluster::Cluster;
use common::managed::cri_endpoint;
use common::node::SHELL;
use isolation::Isolation;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use managed_agent::{agent_kinds, condition, forget_node, wait_ready, Agent};
use rounds::{results_dir, Rounds};
use serde_json::{json, Value};
use stats::percentile;

/// Pods per measured batch of a round. One unmeasured pod comes first, so that neither
/// agent's numbers include pulling the images into the fresh containerd, or its own
/// first-pod set-up.
const SIZES: [usize; 2] = [1, 30];
/// How long a batch may take.
const BATCH_DEADLINE: Duration = Duration::from_secs(300);
/// How long an agent may take to get its Node Ready.
const READY_DEADLINE: Duration = Duration::from_secs(120);
/// How long the pods of a batch may take to go after their deletion.
const DELETE_TIMEOUT: &str = "120s";
/// How long the agent's containers may take to stop once their pods were deleted.
const STOP_DEADLINE: Duration = Duration::from_secs(60);
/// How often the Node, or the agent's pod cgroups, are looked at while waiting.
const POLL: Duration = Duration::from_millis(250);

/// Counts each distinct value of `items`, most frequent first, as "value ×n".
fn tally(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut counts = BTreeMap::<String, usize>::new();
    for item in items {
        *counts.entry(item).or_default() += 1;
    }
    let mut counts: Vec<_> = counts.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    counts
        .into_iter()
        .map(|(v, n)| format!("{v} ×{n}"))
        .collect()
}

/// What stands between `pod` and Running: its phase, and the reason and message of its own
/// status or of its first waiting or terminated container.
fn pod_state(pod: &Value) -> String {
    let status = &pod["status"];
    let phase = status["phase"].as_str().unwrap_or("no phase");
    let container = status["containerStatuses"]
        .as_array()
        .and_then(|all| {
            all.iter().find_map(|c| {
                let state = &c["state"];
                state["waiting"]
                    .as_object()
                    .or_else(|| state["terminated"].as_object())
            })
        })
        .map(|s| {
            format!(
                "{}: {}",
                s.get("reason").and_then(Value::as_str).unwrap_or(""),
                s.get("message").and_then(Value::as_str).unwrap_or("")
            )
        });
    let own = status["reason"]
        .as_str()
        .map(|r| format!("{r}: {}", status["message"].as_str().unwrap_or("")));
    match own.or(container) {
        Some(why) => format!("{phase} ({})", why.trim_end_matches(": ")),
        None => phase.to_owned(),
    }
}

/// Why the pods labelled `bench=<label>` on `node` did not all run: the Node's conditions and
/// taints, the states of the pods not Running, their events and the Node's, and the agent's
/// last errors and warnings.
fn diagnose(cluster: &Cluster, node: &str, label: &str, agent: &mut Agent) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(status) = agent.exited() {
        lines.push(format!("the agent exited: {status}"));
    }
    match cluster.get_json(&["node", node]) {
        None => lines.push(format!("Node {node} does not exist")),
        Some(n) => {
            lines.push(format!(
                "Node {node}: {}",
                condition(&n, "Ready").unwrap_or_else(|| "no Ready condition".to_owned())
            ));
            for kind in [
                "MemoryPressure",
                "DiskPressure",
                "PIDPressure",
                "NetworkUnavailable",
            ] {
                if let Some(c) = condition(&n, kind).filter(|c| !c.contains("=False")) {
                    lines.push(format!("Node {node}: {c}"));
                }
            }
            let taints: Vec<String> = n["spec"]["taints"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| {
                    format!(
                        "{}:{}",
                        t["key"].as_str().unwrap_or(""),
                        t["effect"].as_str().unwrap_or("")
                    )
                })
                .collect();
            if !taints.is_empty() {
                lines.push(format!("Node {node} taints: {}", taints.join(", ")));
            }
        }
    }
    let selector = format!("bench={label}");
    let pods = cluster
        .get_json(&["pods", "-n", "default", "-l", &selector])
        .and_then(|list| list["items"].as_array().cloned())
        .unwrap_or_default();
    let stuck = tally(
        pods.iter()
            .filter(|p| p["status"]["phase"] != "Running")
            .map(pod_state),
    );
    if !stuck.is_empty() {
        lines.push(format!("pods not Running: {}", stuck.join("; ")));
    }
    let events = cluster
        .get_json(&["events", "-n", "default"])
        .and_then(|list| list["items"].as_array().cloned())
        .unwrap_or_default();
    // The events of these pods (by UID: earlier runs had pods of the same names), and the
    // Node's warnings (the kubelet names its Node by name, not UID, so those of an earlier
    // agent of the same name count too).
    let uids: BTreeSet<&str> = pods
        .iter()
        .filter_map(|p| p["metadata"]["uid"].as_str())
        .collect();
    let ours = events.iter().filter(|e| {
        let object = &e["involvedObject"];
        (object["kind"] == "Pod" && object["uid"].as_str().is_some_and(|u| uids.contains(u)))
            || (object["kind"] == "Node" && object["name"] == node && e["type"] == "Warning")
    });
    let reasons = tally(ours.map(|e| {
        let message: String = e["message"]
            .as_str()
            .unwrap_or("")
            .chars()
            .take(300)
            .collect();
        format!(
            "{} {} {}: {}",
            e["involvedObject"]["kind"].as_str().unwrap_or(""),
            e["type"].as_str().unwrap_or(""),
            e["reason"].as_str().unwrap_or(""),
            message
        )
    }));
    for reason in reasons.iter().take(12) {
        lines.push(format!("event: {reason}"));
    }
    // klog's errors and warnings start with E or W and the date; sergeant's carry the level.
    let log = agent.log();
    let complaints: Vec<&str> = log
        .lines()
        .filter(|l| {
            let klog = (l.starts_with('E') || l.starts_with('W'))
                && l[1..].starts_with(|c: char| c.is_ascii_digit());
            klog || l.contains(" ERROR ") || l.contains(" WARN ")
        })
        .collect();
    for line in &complaints[complaints.len().saturating_sub(12)..] {
        let line: String = line.chars().take(400).collect();
        lines.push(format!("agent log: {line}"));
    }
    lines
}

/// One batch's outcome: per pod seen Running, creation to Running as a watch saw it; for
/// sergeant, per pod, its container's CRI StartContainer returning (sergeant's log line) to
/// Running as the watch saw it; and, when not all were seen, why.
struct Batch {
    took: Vec<Duration>,
    start_to_seen: Vec<Duration>,
    diagnosis: Vec<String>,
}

/// The message sergeant logs, inside its pod actor's span, right after CRI StartContainer
/// returned.
const STARTED_LINE: &str = "container started";

/// For each pod of `seen` (name → when a watch saw it Running) that sergeant's text `log`
/// shows started: from the first "container started" line of the pod to its sighting. The
/// line's timestamp (RFC 3339, microseconds) and the sighting are taken on the same clock.
fn start_to_seen_per_pod(log: &str, seen: &BTreeMap<String, SystemTime>) -> Vec<Duration> {
    let mut started: BTreeMap<&str, SystemTime> = BTreeMap::new();
    for line in log.lines().filter(|l| l.contains(STARTED_LINE)) {
        let Some((stamp, rest)) = line.split_once(' ') else {
            continue;
        };
        let Some(name) = rest
            .split_once("pod{")
            .and_then(|(_, span)| span.split(' ').find_map(|f| f.strip_prefix("name=")))
        else {
            continue;
        };
        let Ok(at) = serde_json::from_value::<MicroTime>(json!(stamp)) else {
            continue;
        };
        started
            .entry(name)
            .or_insert_with(|| SystemTime::from(at.0));
    }
    seen.iter()
        .filter_map(|(name, at)| at.duration_since(*started.get(name.as_str())?).ok())
        .collect()
}

/// Creates `count` pods on `node` labelled `bench=bench-<node>-<tag>`, measures them, deletes
/// them again and waits until their containers stopped (no process left in the agent's pod
/// cgroups of `isolation`), so that no batch overlaps the clean-up of the one before.
fn batch(
    cluster: &Cluster,
    node: &str,
    tag: &str,
    count: usize,
    agent: &mut Agent,
    isolation: &Isolation,
) -> Batch {
    let label = format!("bench-{node}-{tag}");
    let watch = cluster.watch_pods(
        &["-l", &format!("bench={label}")],
        "{.metadata.name} {.status.phase}",
    );
    let pods: String = (0..count)
        .map(|i| {
            format!(
                "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {label}-{i}\n  namespace: default\n  labels: {{bench: {label}}}\n\
                 spec:\n  nodeName: {node}\n  terminationGracePeriodSeconds: 1\n  \
                 containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n"
            )
        })
        .collect();
    let created = SystemTime::now();
    cluster.apply(&pods);
    let mut running: BTreeMap<String, SystemTime> = BTreeMap::new();
    let mut finished = BTreeMap::new();
    let deadline = Instant::now() + BATCH_DEADLINE;
    let mut exited = None;
    while running.len() + finished.len() < count && Instant::now() < deadline {
        let Ok((at, line)) = watch.events.recv_timeout(Duration::from_secs(1)) else {
            exited = agent.exited();
            if exited.is_some() {
                break;
            }
            continue;
        };
        match line.split_once(' ') {
            Some((name, "Running")) => {
                running.entry(name.to_owned()).or_insert(at);
            }
            // A pod that failed or completed never runs again (restartPolicy aside, the
            // kubelet rejecting it at admission ends it as Failed).
            Some((name, phase @ ("Failed" | "Succeeded"))) if !running.contains_key(name) => {
                finished.insert(name.to_owned(), phase.to_owned());
            }
            _ => {}
        }
    }
    drop(watch);
    let mut diagnosis = Vec::new();
    if running.len() < count {
        if let Some(status) = exited {
            diagnosis.push(format!(
                "the batch ended early: the agent exited ({status})"
            ));
        } else if running.len() + finished.len() == count {
            diagnosis.push(format!("{} pods ended without running", finished.len()));
        } else {
            diagnosis.push(format!("not all Running within {BATCH_DEADLINE:?}"));
        }
        diagnosis.extend(diagnose(cluster, node, &label, agent));
    }
    let selector = format!("bench={label}");
    let timeout = format!("--timeout={DELETE_TIMEOUT}");
    let delete_pods = |how: &[&str]| {
        let base = ["delete", "pods", "-n", "default", "-l", selector.as_str()];
        cluster.kubectl(&[&base[..], how].concat())
    };
    let (deleted, out) = delete_pods(&["--wait=true", &timeout]);
    if !deleted {
        diagnosis.push(format!(
            "the agent did not delete the pods within {DELETE_TIMEOUT} ({}); force-deleted them",
            out.trim()
        ));
        delete_pods(&["--grace-period=0", "--force"]);
    }
    let stop_deadline = Instant::now() + STOP_DEADLINE;
    while isolation.processes() > 0 && Instant::now() < stop_deadline {
        std::thread::sleep(POLL);
    }
    let left = isolation.processes();
    if left > 0 {
        diagnosis.push(format!(
            "{left} processes still ran in the agent's pod cgroups {STOP_DEADLINE:?} after the pods were deleted"
        ));
    }
    let start_to_seen = match agent {
        Agent::Sergeant(_) => start_to_seen_per_pod(&agent.log(), &running),
        Agent::Upstream(_) => Vec::new(),
    };
    Batch {
        took: running
            .into_values()
            .map(|at| at.duration_since(created).unwrap_or_default())
            .collect(),
        start_to_seen,
        diagnosis,
    }
}

/// Prints `lines` indented below a result line.
fn print_indented(lines: &[String]) {
    for line in lines {
        println!("{:>18}{line}", "");
    }
}

/// Runs the warm-up pod and the batches of round `index` on `agent`, Node `node`: their
/// results, or why the Node never got Ready or the warm-up pod never ran.
fn measure(
    cluster: &Cluster,
    name: &str,
    node: &str,
    index: usize,
    agent: &mut Agent,
    isolation: &Isolation,
) -> Result<Value, Vec<String>> {
    match wait_ready(cluster, node, agent, READY_DEADLINE) {
        Ok(took) => println!(
            "{name:>16}: Node {node} Ready after {:.1} s",
            took.as_secs_f64()
        ),
        Err(why) => {
            println!("{name:>16}: not measured: {why}");
            let mut diagnosis = vec![why];
            diagnosis.extend(diagnose(cluster, node, "none", agent));
            print_indented(&diagnosis[1..]);
            return Err(diagnosis);
        }
    }
    let warm_up = batch(
        cluster,
        node,
        &format!("{index}-warm-up"),
        1,
        agent,
        isolation,
    );
    let Some(warm_up_took) = warm_up.took.first() else {
        println!("{name:>16}: not measured: the warm-up pod did not run");
        print_indented(&warm_up.diagnosis);
        return Err(warm_up.diagnosis);
    };
    let warm_up_ms = warm_up_took.as_secs_f64() * 1e3;
    println!("{name:>16}   1 pod, warm-up (not counted): {warm_up_ms:.1} ms");
    print_indented(&warm_up.diagnosis);
    let mut numbers = json!({ "warm_up_ms": warm_up_ms });
    for (i, &count) in SIZES.iter().enumerate() {
        let Batch {
            mut took,
            mut start_to_seen,
            diagnosis,
        } = batch(
            cluster,
            node,
            &format!("{index}-{i}"),
            count,
            agent,
            isolation,
        );
        took.sort();
        let (p50, p99) = (percentile(&took, 0.5), percentile(&took, 0.99));
        println!(
            "{name:>16} {count:>3} pods: created → Running seen by a watch: p50 {p50:>7.1} ms, p99 {p99:>7.1} ms ({} of {count} seen)",
            took.len()
        );
        let mut result = json!({"seen": took.len(), "p50_ms": p50, "p99_ms": p99});
        if !start_to_seen.is_empty() {
            start_to_seen.sort();
            let (p50, p99) = (
                percentile(&start_to_seen, 0.5),
                percentile(&start_to_seen, 0.99),
            );
            println!(
                "{name:>16} {count:>3} pods: StartContainer returned → Running seen by a watch: p50 {p50:>7.1} ms, p99 {p99:>7.1} ms"
            );
            result["start_to_seen"] =
                json!({"p50_ms": p50, "p99_ms": p99, "pods": start_to_seen.len()});
        }
        print_indented(&diagnosis);
        if !diagnosis.is_empty() {
            result["diagnosis"] = json!(diagnosis);
        }
        numbers[format!("{count}_pods")] = result;
    }
    Ok(numbers)
}

/// One round of agent `name` (`binary` for the upstream kubelet): a fresh agent registered as
/// Node `bench-<name>`, measured, stopped, and its Node deleted.
fn round(cluster: &Cluster, name: &str, binary: Option<&Path>, index: usize) -> Value {
    let node = format!("bench-{name}").replace('_', "-");
    forget_node(cluster, &node);
    let scratch = tempfile::tempdir().expect("a temporary directory");
    let isolation = Isolation::new(&format!("managed-{name}"), scratch.path());
    let log = results_dir().join(format!("managed_startup-{name}-{index}.log"));
    let mut agent = Agent::start(cluster, binary, &node, None, &isolation, &log);
    let mut result = match measure(cluster, name, &node, index, &mut agent, &isolation) {
        Ok(measured) => measured,
        Err(why) => json!({"error": why}),
    };
    result["log"] = json!(log.display().to_string());
    if let Agent::Sergeant(_) = agent {
        fs::write(&log, agent.log()).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    }
    cluster.kubectl(&["delete", "node", &node, "--ignore-not-found"]);
    // The agent stops before its cgroups go.
    drop(agent);
    drop(isolation);
    result
}

fn main() {
    let cluster = Cluster::from_env();
    let report = json!({"benchmark": "managed_startup", "runtime": cri_endpoint(), "sizes": SIZES});
    let mut rounds = Rounds::new("managed_startup.json", report);
    rounds.run(
        &agent_kinds(),
        |(name, _)| (*name).to_owned(),
        |(name, binary), index| round(&cluster, name, binary.as_deref(), index),
    );
    rounds.finish();
}
