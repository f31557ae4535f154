//! Response times of the kubelet API's heavy endpoints, `/stats/summary` and `/metrics`, on a
//! full node, for sergeant and the upstream kubelet (a benchmark, not a test: it prints
//! numbers and writes them to a results file, it asserts nothing).
//!
//! A round starts the agent afresh with 110 static pods on the benchmark's containerd, with
//! the same KubeletConfiguration for both agents; once all run and its summary lists them,
//! each endpoint is read `REQUESTS` times in a row on each port — the TLS API port (anonymous
//! access allowed, so both pay the same TLS and authorization path) and the plain read-only
//! port — over one kept connection, and its p50 and p99 reported. The upstream kubelet is
//! measured when `UPSTREAM_KUBELET` names its binary; `SERGEANT_BENCH_ROUNDS` rounds per
//! agent, interleaved (see `common/rounds.rs`), each printed as it comes and their median,
//! min and max per agent at the end. Needs SERGEANT_CRI_ENDPOINT (see tests/bench.sh).
//! Results go to `$SERGEANT_RESULTS_DIR/api_latency.json` (default `target/bench-results`).

mod common;

use std::time::{Duration, Instant};

use common::rounds::Rounds;
use common::stats::percentile;
use common::{all, containers_running, wait_for, Agent, Kind};
use serde_json::{json, Value};

/// Pods on the node: upstream's default `maxPods`.
const PODS: usize = 110;
/// Requests per endpoint and port.
const REQUESTS: usize = 50;
/// How long the pods may take to run, and to leave.
const POD_DEADLINE: Duration = Duration::from_secs(600);
/// How long the agent's summary may take to list every pod once they run.
const SUMMARY_DEADLINE: Duration = Duration::from_secs(120);
/// The endpoints measured.
const PATHS: [&str; 2] = ["/stats/summary", "/metrics"];

/// The p50 and p99, in milliseconds, of `REQUESTS` reads of `url`.
fn latency(agent: &Agent, url: &str) -> (f64, f64) {
    let mut times: Vec<Duration> = (0..REQUESTS)
        .map(|_| {
            let began = Instant::now();
            let (status, body) = agent.get(url).unwrap_or_else(|e| panic!("GET {url}: {e}"));
            let took = began.elapsed();
            assert_eq!(status, 200, "GET {url}: {body}");
            took
        })
        .collect();
    times.sort();
    (percentile(&times, 0.50), percentile(&times, 0.99))
}

/// How many pods the summary at `url` lists, once it answers.
fn summarized(agent: &Agent, url: &str) -> Option<usize> {
    let (status, body) = agent.get(url).ok()?;
    let summary: Value = serde_json::from_str(&body).ok().filter(|_| status == 200)?;
    summary["pods"].as_array().map(Vec::len)
}

/// sergeant's mean background sample time of the pods' stats, in milliseconds, from
/// `/metrics`; `None` for an agent without it (the upstream kubelet).
fn mean_sample_ms(agent: &Agent) -> Option<f64> {
    let text = agent.metrics()?;
    let value = |suffix: &str| {
        common::metric_value(
            &text,
            &format!("sergeant_stats_sample_duration_seconds_{suffix}"),
        )
    };
    Some(value("sum")? / value("count")?.max(1.0) * 1e3)
}

/// One round: a fresh agent with the pods, every endpoint measured on both ports.
fn measure(kind: &Kind, endpoint: &str) -> Value {
    let agent = Agent::start(kind, endpoint);
    agent.write_pods(0, PODS);
    agent.wait(POD_DEADLINE, |pods| all(pods, PODS, containers_running));
    let mut results = json!({});
    for (port, base) in [("secure", &agent.secure), ("read_only", &agent.read_only)] {
        let summary = format!("{base}/stats/summary");
        wait_for(
            &format!("{} to summarize {PODS} pods", kind.name()),
            SUMMARY_DEADLINE,
            || (summarized(&agent, &summary)? == PODS).then_some(()),
        );
        for path in PATHS {
            let (p50, p99) = latency(&agent, &format!("{base}{path}"));
            println!(
                "{:>16} {port:>9} {path:<14} p50 {p50:>8.2} ms  p99 {p99:>8.2} ms",
                kind.name()
            );
            results[port][path] = json!({"p50_ms": p50, "p99_ms": p99});
        }
    }
    if let Some(mean) = mean_sample_ms(&agent) {
        println!(
            "{:>16} background pod stats sample: mean {mean:.1} ms",
            kind.name()
        );
        results["background_sample_mean_ms"] = json!(mean);
    }
    agent.clear(POD_DEADLINE);
    results
}

fn main() {
    let endpoint = common::endpoint();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("{PODS} pods, {REQUESTS} requests per endpoint and port; load {load}");
    let report = json!({"benchmark": "api_latency", "runtime": endpoint, "pods": PODS,
        "requests": REQUESTS, "load_before": load.trim()});
    let mut rounds = Rounds::new("api_latency.json", report);
    rounds.run(
        &Kind::from_env(),
        |kind| kind.name().to_owned(),
        |kind, _| {
            let mut numbers = measure(kind, &endpoint);
            numbers["load_after"] = json!(std::fs::read_to_string("/proc/loadavg")
                .unwrap_or_default()
                .trim());
            numbers
        },
    );
    rounds.finish();
}
