//! Response times of the read-only port's heavy endpoints, `/stats/summary` and `/metrics`,
//! on a full node (a benchmark, not a test: it prints numbers and writes them to a results
//! file, it asserts nothing).
//!
//! A standalone sergeant on the real containerd runs 110 static pods; once all run, each
//! endpoint is read `REQUESTS` times in a row and its p50 and p99 reported. Needs
//! SERGEANT_CRI_ENDPOINT (see tests/bench.sh). Results go to
//! `$SERGEANT_RESULTS_DIR/api_latency.json` (default `target/bench-results`).

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::node::{manifest, Node, SHELL};
use common::wait_for;
use serde_json::json;

/// Pods on the node: upstream's default `maxPods`.
const PODS: usize = 110;
/// Requests per endpoint.
const REQUESTS: usize = 50;
/// How long the pods may take to run.
const START_DEADLINE: Duration = Duration::from_secs(600);

fn results_dir() -> PathBuf {
    std::env::var_os("SERGEANT_RESULTS_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-results"),
        PathBuf::from,
    )
}

/// How many pods `/pods` lists as `Running`.
fn running(node: &Node) -> usize {
    node.agent.get_json("/pods")["items"]
        .as_array()
        .map_or(0, |pods| {
            pods.iter()
                .filter(|p| p["status"]["phase"] == "Running")
                .count()
        })
}

/// The p50 and p99, in milliseconds, of `REQUESTS` reads of `path`.
fn latency(node: &Node, path: &str) -> (f64, f64) {
    let mut times: Vec<Duration> = (0..REQUESTS)
        .map(|_| {
            let began = Instant::now();
            let (status, _) = node.agent.get(path);
            assert_eq!(status, 200, "GET {path}");
            began.elapsed()
        })
        .collect();
    times.sort();
    let at = |q: f64| {
        let index = ((times.len() as f64 * q).ceil() as usize).clamp(1, times.len()) - 1;
        times[index].as_secs_f64() * 1e3
    };
    (at(0.50), at(0.99))
}

fn main() {
    let node = Node::start("api-latency");
    let spec = format!(
        "  containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n"
    );
    for i in 0..PODS {
        node.write(&format!("p{i}.yaml"), &manifest(&format!("p{i}"), &spec));
    }
    wait_for(&format!("{PODS} pods running"), START_DEADLINE, || {
        (running(&node) == PODS).then_some(())
    });
    let mut report = json!({"benchmark": "api_latency", "pods": PODS, "requests": REQUESTS});
    for path in ["/stats/summary", "/metrics"] {
        let (p50, p99) = latency(&node, path);
        println!("{path}: p50 {p50:.2} ms, p99 {p99:.2} ms ({PODS} pods, {REQUESTS} requests)");
        report[path] = json!({"p50_ms": p50, "p99_ms": p99});
    }
    let dir = results_dir();
    std::fs::create_dir_all(&dir).expect("the results directory");
    let file = dir.join("api_latency.json");
    std::fs::write(&file, serde_json::to_string_pretty(&report).expect("json"))
        .expect("results written");
    println!("results in {}", file.display());
}
