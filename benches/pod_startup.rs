//! Pod start-up and footprint of sergeant on the real containerd (a benchmark, not a test:
//! it prints numbers and writes them to a results file, it asserts nothing).
//!
//! A round starts the agent afresh and, for 1, 10 and 110 static pods in turn, measures the
//! time from the manifests being written to every container running (as `/pods` reports it)
//! and to every pod `Running`, with `/healthz`'s answer times during that burst beside the
//! machine's floor (a do-nothing server's answer times in the same burst, see
//! `common/liveness.rs`); then, with the 110 pods running, the agent's RSS and CPU use while
//! idle; each size's pods are removed (and their containers stopped) before the next. The
//! rounds run against sergeant and, when `UPSTREAM_KUBELET` names its binary, against the
//! upstream kubelet in standalone mode on the same containerd with the same configuration,
//! `SERGEANT_BENCH_ROUNDS` rounds per agent, interleaved (see `common/rounds.rs`); each round's
//! numbers are printed as they come, and their median, min and max per agent at the end.
//!
//! `SERGEANT_BASELINE` may name another sergeant binary (an older commit's, built with the same
//! release profile) to measure as a third agent in the same rounds, with the same
//! configuration, pods and measurements as this package's sergeant: a before-and-after of a
//! change in one run. It is named `SERGEANT_BASELINE_LABEL` (say, the commit) in the output,
//! `sergeant-baseline` when that is not set. Unset, only sergeant and the upstream kubelet run.
//!
//! Needs SERGEANT_CRI_ENDPOINT (see tests/bench.sh, which starts containerd and builds the
//! upstream kubelet). Results go to `$SERGEANT_RESULTS_DIR/pod_startup.json` (default
//! `target/bench-results`).

mod common;

use std::time::{Duration, Instant};

use common::liveness::{FloorServer, Sampler};
use common::process::{cpu_percent, rss_kib};
use common::rounds::Rounds;
use common::stats::percentile;
use common::{all, containers_running, Agent, Kind};
use serde_json::{json, Value};

/// The pods a round starts, one size after the other.
const SIZES: [usize; 3] = [1, 10, 110];
/// How long one size's pods may take to start, or to go.
const SIZE_DEADLINE: Duration = Duration::from_secs(600);
/// How long the agent's idle CPU use is measured.
const IDLE_WINDOW: Duration = Duration::from_secs(10);

/// sergeant's `sergeant_pod_start_overhead_seconds` p50 and p99 (seconds) over the last
/// minute, from `/metrics`; `None` for an agent without it (the upstream kubelet).
fn own_overhead(agent: &Agent) -> Option<(f64, f64)> {
    let text = agent.metrics()?;
    let quantile = |q: &str| {
        let series = format!("sergeant_pod_start_overhead_seconds{{quantile=\"{q}\"}}");
        common::metric_value(&text, &series)
    };
    Some((quantile("0.5")?, quantile("0.99")?))
}

/// One round of `kind`: a fresh agent, every size in turn; the numbers per size, under
/// `<size>_pods`.
fn round(kind: &Kind, endpoint: &str, floor: &FloorServer) -> Value {
    let agent = Agent::start(kind, endpoint);
    let pid = agent.pid();
    let mut numbers = json!({});
    for (size, &count) in SIZES.iter().enumerate() {
        let healthz = Sampler::start(&agent.healthz);
        let yardstick = Sampler::start(&floor.url);
        let written = Instant::now();
        agent.write_pods(size, count);
        agent.wait(SIZE_DEADLINE, |pods| all(pods, count, containers_running));
        let to_started = written.elapsed();
        agent.wait(SIZE_DEADLINE, |pods| {
            all(pods, count, |p| p["status"]["phase"] == "Running")
        });
        let to_running = written.elapsed();
        let latencies = healthz.finish();
        let floor_latencies = yardstick.finish();
        let (p50, p99) = (percentile(&latencies, 0.5), percentile(&latencies, 0.99));
        let max = percentile(&latencies, 1.0);
        let (floor_p50, floor_p99) = (
            percentile(&floor_latencies, 0.5),
            percentile(&floor_latencies, 0.99),
        );
        println!(
            "{:>16} {count:>4} pods: /healthz while starting p50 {p50:>6.1} ms, p99 {p99:>6.1} ms, max {max:>6.1} ms ({} checks); \
             the machine's floor p50 {floor_p50:>6.1} ms, p99 {floor_p99:>6.1} ms",
            kind.name(),
            latencies.len()
        );
        println!(
            "{:>16} {count:>4} pods: all containers started {:>8.1} ms, all Running at /pods {:>8.1} ms",
            kind.name(),
            to_started.as_secs_f64() * 1e3,
            to_running.as_secs_f64() * 1e3
        );
        let mut entry = json!({"started_ms": to_started.as_secs_f64() * 1e3, "running_ms": to_running.as_secs_f64() * 1e3,
            "healthz_p50_ms": p50, "healthz_p99_ms": p99, "healthz_max_ms": max, "healthz_checks": latencies.len(),
            "floor_p50_ms": floor_p50, "floor_p99_ms": floor_p99});
        if let Some(overhead) = own_overhead(&agent) {
            println!(
                "{:>16} {count:>4} pods: own overhead per pod (start-up less CRI calls) p50 {:>6.1} ms, p99 {:>6.1} ms",
                kind.name(),
                overhead.0 * 1e3,
                overhead.1 * 1e3
            );
            entry["own_overhead_p50_ms"] = json!(overhead.0 * 1e3);
            entry["own_overhead_p99_ms"] = json!(overhead.1 * 1e3);
        }
        if count == *SIZES.last().unwrap_or(&0) {
            let cpu_percent = cpu_percent(&[pid], IDLE_WINDOW);
            let rss = rss_kib(pid);
            println!(
                "{:>16} idle with {count} pods: RSS {:.1} MiB, CPU {cpu_percent:.2} %",
                kind.name(),
                rss as f64 / 1024.0
            );
            entry["idle_rss_mib"] = json!(rss as f64 / 1024.0);
            entry["idle_cpu_percent"] = json!(cpu_percent);
        }
        numbers[format!("{count}_pods")] = entry;
        agent.clear(SIZE_DEADLINE);
    }
    numbers
}

fn main() {
    let endpoint = common::endpoint();
    let report = json!({"benchmark": "pod_startup", "runtime": endpoint, "sizes": SIZES,
        "idle_window_s": IDLE_WINDOW.as_secs()});
    let mut rounds = Rounds::new("pod_startup.json", report);
    let floor = FloorServer::start();
    let mut kinds = Kind::from_env();
    kinds.extend(Kind::baseline_from_env());
    rounds.run(
        &kinds,
        |kind| kind.name().to_owned(),
        |kind, _| round(kind, &endpoint, &floor),
    );
    rounds.finish();
}
