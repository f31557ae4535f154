//! Pod start-up and footprint of sergeant on the real containerd (a benchmark, not a test:
//! it prints numbers and writes them to a results file, it asserts nothing).
//!
//! For 1, 10 and 110 static pods: the time from the manifests being written to every
//! container running (as `/pods` reports it) and to every pod `Running`; then the agent's RSS
//! and CPU use while idle with the pods running. The same rounds run against sergeant and,
//! when `UPSTREAM_KUBELET` names its binary, against the upstream kubelet in standalone mode
//! on the same containerd, one after the other.
//!
//! Needs SERGEANT_CRI_ENDPOINT (see tests/bench.sh, which starts containerd and builds the
//! upstream kubelet). Results go to `$SERGEANT_RESULTS_DIR/pod_startup.json` (default
//! `target/bench-results`).

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const SHELL: &str = "127.0.0.1:5000/sergeant/shell:1.0";
const SIZES: [usize; 3] = [1, 10, 110];
const ROUND_DEADLINE: Duration = Duration::from_secs(600);
const IDLE_WINDOW: Duration = Duration::from_secs(10);

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Which node agent runs the rounds.
enum Kind {
    Sergeant,
    Upstream(PathBuf),
}

impl Kind {
    fn name(&self) -> &'static str {
        match self {
            Kind::Sergeant => "sergeant",
            Kind::Upstream(_) => "upstream_kubelet",
        }
    }
}

/// A node agent running static pods from a directory, serving `/pods` on a read-only port.
struct Agent {
    child: Child,
    port: u16,
    manifests: PathBuf,
    _dir: tempfile::TempDir,
}

impl Agent {
    fn start(kind: &Kind, endpoint: &str) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let manifests = dir.path().join("manifests");
        fs::create_dir(&manifests).expect("manifest dir");
        let port = free_port();
        let mut config_text = format!(
            "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\naddress: 127.0.0.1\n\
             healthzPort: {}\nreadOnlyPort: {port}\nstaticPodPath: {}\ncontainerRuntimeEndpoint: {endpoint}\n\
             maxPods: 120\nfileCheckFrequency: 1s\ncgroupDriver: cgroupfs\nfailSwapOn: false\n",
            free_port(),
            manifests.display()
        );
        let binary = match kind {
            Kind::Sergeant => PathBuf::from(env!("CARGO_BIN_EXE_sergeant")),
            Kind::Upstream(binary) => {
                // Standalone upstream kubelet on this machine: cgroup v1 allowed, no API server.
                config_text.push_str(&format!(
                    "port: {}\nfailCgroupV1: false\nauthentication:\n  anonymous: {{enabled: true}}\n  \
                     webhook: {{enabled: false}}\nauthorization: {{mode: AlwaysAllow}}\n",
                    free_port()
                ));
                binary.clone()
            }
        };
        let config = dir.path().join("config.yaml");
        fs::write(&config, config_text).expect("config written");
        let child = Command::new(binary)
            .arg("--config")
            .arg(&config)
            .arg("--root-dir")
            .arg(dir.path().join("root"))
            .args(["--hostname-override", "bench"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the agent starts");
        let agent = Self {
            child,
            port,
            manifests,
            _dir: dir,
        };
        agent.wait(Duration::from_secs(60), |_| true);
        agent
    }

    fn pods(&self) -> Option<Vec<Value>> {
        let body = reqwest::blocking::get(format!("http://127.0.0.1:{}/pods", self.port))
            .ok()?
            .text()
            .ok()?;
        let list = serde_json::from_str::<Value>(&body).ok()?;
        // The upstream kubelet writes `"items": null` for an empty list.
        Some(list["items"].as_array().cloned().unwrap_or_default())
    }

    /// sergeant's `sergeant_pod_start_overhead_seconds` p50 and p99 (seconds) over the last
    /// minute, from `/metrics`; `None` for an agent without it (the upstream kubelet).
    fn own_overhead(&self) -> Option<(f64, f64)> {
        let text = reqwest::blocking::get(format!("http://127.0.0.1:{}/metrics", self.port))
            .ok()?
            .text()
            .ok()?;
        let quantile = |q: &str| {
            let prefix = format!("sergeant_pod_start_overhead_seconds{{quantile=\"{q}\"}} ");
            text.lines()
                .find_map(|l| l.strip_prefix(prefix.as_str()))
                .and_then(|v| v.trim().parse::<f64>().ok())
        };
        Some((quantile("0.5")?, quantile("0.99")?))
    }

    fn wait(&self, deadline: Duration, done: impl Fn(&[Value]) -> bool) -> Duration {
        let start = Instant::now();
        loop {
            if self.pods().is_some_and(|pods| done(&pods)) {
                return start.elapsed();
            }
            assert!(start.elapsed() < deadline, "not done within {deadline:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn write_pods(&self, round: usize, count: usize) {
        for i in 0..count {
            let manifest = format!(
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bench-{round}-{i}\nspec:\n  terminationGracePeriodSeconds: 1\n  \
                 containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n"
            );
            fs::write(
                self.manifests.join(format!("pod-{round}-{i}.yaml")),
                manifest,
            )
            .expect("manifest written");
        }
    }

    fn clear(&self) {
        for entry in fs::read_dir(&self.manifests)
            .expect("manifest dir")
            .flatten()
        {
            fs::remove_file(entry.path()).expect("manifest removed");
        }
        self.wait(ROUND_DEADLINE, <[Value]>::is_empty);
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn all(pods: &[Value], count: usize, check: impl Fn(&Value) -> bool) -> bool {
    pods.len() == count && pods.iter().all(check)
}

fn containers_running(pod: &Value) -> bool {
    pod["status"]["containerStatuses"]
        .as_array()
        .is_some_and(|c| c.iter().all(|s| s["state"]["running"].is_object()))
}

fn rss_kib(pid: u32) -> u64 {
    fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// User + system CPU time of `pid`, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after_name = stat.rsplit(')').next().unwrap_or_default();
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(11) + field(12)
}

fn results_dir() -> PathBuf {
    std::env::var_os("SERGEANT_RESULTS_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-results"),
        PathBuf::from,
    )
}

/// Runs the rounds against one agent and returns their results.
fn rounds(kind: &Kind, endpoint: &str) -> Vec<Value> {
    let agent = Agent::start(kind, endpoint);
    let pid = agent.child.id();
    let mut rounds = Vec::new();
    for (round, &count) in SIZES.iter().enumerate() {
        let written = Instant::now();
        agent.write_pods(round, count);
        agent.wait(ROUND_DEADLINE, |pods| all(pods, count, containers_running));
        let to_started = written.elapsed();
        agent.wait(ROUND_DEADLINE, |pods| {
            all(pods, count, |p| p["status"]["phase"] == "Running")
        });
        let to_running = written.elapsed();
        println!(
            "{:>16} {count:>4} pods: all containers started {:>8.1} ms, all Running at /pods {:>8.1} ms",
            kind.name(),
            to_started.as_secs_f64() * 1e3,
            to_running.as_secs_f64() * 1e3
        );
        let mut entry = json!({"pods": count, "started_ms": to_started.as_secs_f64() * 1e3, "running_ms": to_running.as_secs_f64() * 1e3});
        if let Some(overhead) = agent.own_overhead() {
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
            let ticks_before = cpu_ticks(pid);
            std::thread::sleep(IDLE_WINDOW);
            let cpu_percent =
                (cpu_ticks(pid) - ticks_before) as f64 / 100.0 / IDLE_WINDOW.as_secs_f64() * 100.0;
            let rss = rss_kib(pid);
            println!(
                "{:>16} idle with {count} pods: RSS {:.1} MiB, CPU {cpu_percent:.2} %",
                kind.name(),
                rss as f64 / 1024.0
            );
            entry["idle_rss_mib"] = json!(rss as f64 / 1024.0);
            entry["idle_cpu_percent"] = json!(cpu_percent);
        }
        rounds.push(entry);
        agent.clear();
    }
    rounds
}

fn main() {
    let endpoint =
        std::env::var("SERGEANT_CRI_ENDPOINT").expect("SERGEANT_CRI_ENDPOINT (run tests/bench.sh)");
    let mut kinds = vec![Kind::Sergeant];
    match std::env::var_os("UPSTREAM_KUBELET") {
        Some(binary) => kinds.push(Kind::Upstream(PathBuf::from(binary))),
        None => println!("UPSTREAM_KUBELET not set: the upstream kubelet is not measured"),
    }
    let mut report = json!({"benchmark": "pod_startup", "runtime": endpoint});
    for kind in &kinds {
        report[kind.name()] = json!(rounds(kind, &endpoint));
    }
    let dir = results_dir();
    fs::create_dir_all(&dir).expect("results dir");
    let file = dir.join("pod_startup.json");
    fs::write(&file, serde_json::to_string_pretty(&report).expect("json"))
        .expect("results written");
    println!("results: {}", file.display());
}
