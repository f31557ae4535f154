//! What the benchmarks comparing sergeant with the upstream kubelet share: starting any
//! agent in standalone mode on the same containerd with the same KubeletConfiguration (static
//! pods from a directory, the read-only port, and the TLS port with anonymous access allowed),
//! filling and emptying its manifest directory; running the rounds and writing the results
//! file ([`rounds`]). Each agent runs with a cgroup root and pod logs directory of its own
//! ([`isolation`]).
#![allow(dead_code)] // each benchmark uses its own part

#[path = "../../tests/common/mod.rs"]
mod harness;
pub mod isolation;
pub mod liveness;
pub mod process;
pub mod rounds;
pub mod stats;

use std::fs;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use harness::wait_for;
use serde_json::Value;

/// A busybox-based image with `sh`, in the local registry.
pub const SHELL: &str = harness::node::SHELL;

/// Which node agent a benchmark runs.
pub enum Kind {
    /// The binary of this package.
    Sergeant,
    /// Another sergeant binary (an older build, say), run exactly as [`Kind::Sergeant`] is.
    Baseline {
        /// The binary.
        binary: PathBuf,
        /// Its name in printed tables and results files.
        label: String,
    },
    /// The upstream kubelet binary at this path.
    Upstream(PathBuf),
}

impl Kind {
    /// sergeant, and the upstream kubelet when `UPSTREAM_KUBELET` names its binary.
    pub fn from_env() -> Vec<Self> {
        let mut kinds = vec![Kind::Sergeant];
        match std::env::var_os("UPSTREAM_KUBELET") {
            Some(binary) => kinds.push(Kind::Upstream(PathBuf::from(binary))),
            None => println!("UPSTREAM_KUBELET not set: the upstream kubelet is not measured"),
        }
        kinds
    }

    /// The sergeant binary `SERGEANT_BASELINE` names, when set, named
    /// `SERGEANT_BASELINE_LABEL` (letters, digits, `.`, `_`, `-`; default `sergeant-baseline`).
    ///
    /// # Panics
    /// When the binary is not a file, or the label is not such a name or is another agent's.
    pub fn baseline_from_env() -> Option<Self> {
        let binary =
            PathBuf::from(std::env::var_os("SERGEANT_BASELINE").filter(|b| !b.is_empty())?);
        assert!(
            binary.is_file(),
            "SERGEANT_BASELINE={}: no such file",
            binary.display()
        );
        let label = std::env::var("SERGEANT_BASELINE_LABEL")
            .unwrap_or_else(|_| "sergeant-baseline".to_owned());
        // The label also names the agent's cgroup root (see `isolation`).
        let simple = !label.is_empty()
            && label
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        assert!(
            simple && !matches!(label.as_str(), "sergeant" | "upstream_kubelet"),
            "SERGEANT_BASELINE_LABEL={label:?}: give a name of letters, digits, '.', '_' and '-' that no other agent has"
        );
        Some(Kind::Baseline { binary, label })
    }

    /// The agent's name in printed tables and results files.
    pub fn name(&self) -> &str {
        match self {
            Kind::Sergeant => "sergeant",
            Kind::Baseline { label, .. } => label,
            Kind::Upstream(_) => "upstream_kubelet",
        }
    }
}

/// The containerd endpoint the benchmarks run on.
pub fn endpoint() -> String {
    std::env::var("SERGEANT_CRI_ENDPOINT").expect("SERGEANT_CRI_ENDPOINT (run tests/bench.sh)")
}

/// A node agent running static pods from a directory, serving the read-only port over HTTP
/// and its API port over TLS (self-signed; anonymous requests allowed).
pub struct Agent {
    child: Child,
    /// `http://127.0.0.1:<readOnlyPort>`.
    pub read_only: String,
    /// `https://127.0.0.1:<port>`.
    pub secure: String,
    /// `http://127.0.0.1:<healthzPort>/healthz`.
    pub healthz: String,
    client: reqwest::blocking::Client,
    manifests: PathBuf,
    /// Dropped after the process was killed ([`Drop`] runs before the fields go).
    isolation: isolation::Isolation,
    _dir: tempfile::TempDir,
}

impl Agent {
    /// Starts `kind` on containerd at `endpoint` and waits until its read-only port answers.
    pub fn start(kind: &Kind, endpoint: &str) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let manifests = dir.path().join("manifests");
        fs::create_dir(&manifests).expect("manifest dir");
        let (read_only, secure, healthz) = (
            harness::free_port(),
            harness::free_port(),
            harness::free_port(),
        );
        let isolation =
            isolation::Isolation::new(&format!("standalone-{}", kind.name()), dir.path());
        let mut config_text = format!(
            "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\naddress: 127.0.0.1\n\
             healthzPort: {healthz}\nreadOnlyPort: {read_only}\nport: {secure}\nstaticPodPath: {}\n\
             containerRuntimeEndpoint: {endpoint}\nmaxPods: 120\nfileCheckFrequency: 1s\n\
             cgroupDriver: cgroupfs\nfailSwapOn: false\n{}authentication:\n  anonymous: {{enabled: true}}\n  \
             webhook: {{enabled: false}}\nauthorization: {{mode: AlwaysAllow}}\n",
            manifests.display(),
            isolation.kubelet_config()
        );
        let binary = match kind {
            Kind::Sergeant => PathBuf::from(env!("CARGO_BIN_EXE_sergeant")),
            Kind::Baseline { binary, .. } => binary.clone(),
            Kind::Upstream(binary) => {
                // Standalone upstream kubelet on this machine: cgroup v1 allowed.
                config_text.push_str("failCgroupV1: false\n");
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
        // Both serving certificates are self-signed: the benchmark measures, it trusts.
        let client = reqwest::blocking::Client::builder()
            .use_rustls_tls()
            .danger_accept_invalid_certs(true)
            .timeout(Duration::from_secs(30))
            .build()
            .expect("an HTTP client");
        let agent = Self {
            child,
            read_only: format!("http://127.0.0.1:{read_only}"),
            secure: format!("https://127.0.0.1:{secure}"),
            healthz: format!("http://127.0.0.1:{healthz}/healthz"),
            client,
            manifests,
            isolation,
            _dir: dir,
        };
        agent.wait(Duration::from_secs(60), |_| true);
        agent
    }

    /// The agent's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// GET `url` on the agent's kept connections: the status and body.
    ///
    /// # Errors
    /// When no HTTP answer came.
    pub fn get(&self, url: &str) -> Result<(u16, String), String> {
        let response = self.client.get(url).send().map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        Ok((status, response.text().map_err(|e| e.to_string())?))
    }

    /// The text of `/metrics` on the read-only port.
    pub fn metrics(&self) -> Option<String> {
        Some(self.get(&format!("{}/metrics", self.read_only)).ok()?.1)
    }

    /// The pods `/pods` on the read-only port lists, once it answers.
    pub fn pods(&self) -> Option<Vec<Value>> {
        let (_, body) = self.get(&format!("{}/pods", self.read_only)).ok()?;
        let list = serde_json::from_str::<Value>(&body).ok()?;
        // The upstream kubelet writes `"items": null` for an empty list.
        Some(list["items"].as_array().cloned().unwrap_or_default())
    }

    /// Waits until the listed pods pass `done`, and says how long it took.
    pub fn wait(&self, deadline: Duration, done: impl Fn(&[Value]) -> bool) -> Duration {
        let start = Instant::now();
        wait_for("the agent's pods", deadline, || {
            self.pods().filter(|pods| done(pods))
        });
        start.elapsed()
    }

    /// Writes `count` manifests of one-container pods named `bench-<batch>-<i>`.
    pub fn write_pods(&self, batch: usize, count: usize) {
        for i in 0..count {
            let manifest = format!(
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bench-{batch}-{i}\nspec:\n  terminationGracePeriodSeconds: 1\n  \
                 containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n"
            );
            fs::write(
                self.manifests.join(format!("pod-{batch}-{i}.yaml")),
                manifest,
            )
            .expect("manifest written");
        }
    }

    /// Removes every manifest and waits until the agent lists no pod and no process runs in its
    /// pod cgroups any more. The upstream kubelet drops a static pod from `/pods` before it
    /// stopped the pod's containers: without the second wait they outlive the agent (killed
    /// after the last round) and run on during the next agent's measurements.
    pub fn clear(&self, deadline: Duration) {
        for entry in fs::read_dir(&self.manifests)
            .expect("manifest dir")
            .flatten()
        {
            fs::remove_file(entry.path()).expect("manifest removed");
        }
        let start = Instant::now();
        self.wait(deadline, <[Value]>::is_empty);
        wait_for(
            "the agent's containers to stop",
            deadline.saturating_sub(start.elapsed()),
            || (self.isolation.processes() == 0).then_some(()),
        );
    }
}

impl Drop for Agent {
    /// Kills the agent and takes off the mounts it left on its root directory (the upstream
    /// kubelet bind-mounts it onto itself).
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        isolation::unmount_all(&self._dir.path().join("root"));
    }
}

/// Whether `pods` are `count` pods that all pass `check`.
pub fn all(pods: &[Value], count: usize, check: impl Fn(&Value) -> bool) -> bool {
    pods.len() == count && pods.iter().all(check)
}

/// Whether every container of `pod` runs.
pub fn containers_running(pod: &Value) -> bool {
    pod["status"]["containerStatuses"]
        .as_array()
        .is_some_and(|c| c.iter().all(|s| s["state"]["running"].is_object()))
}

/// The value of `series` (a metric name with its labels, as exposed) in the metrics `text`.
pub fn metric_value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse::<f64>().ok())
}
