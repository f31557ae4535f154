//! The harness of the end-to-end tests: runs the real `sergeant` binary with a configuration
//! written for the test, and talks to it over HTTP on loopback.
#![allow(dead_code)] // each test binary uses its own part of the harness

use std::fs;
use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

pub mod apiserver;
pub mod cgroups;
pub mod cluster;
pub mod instance;
pub mod machine;
pub mod managed;
pub mod node;
pub mod relay;
pub mod runtime;

/// A port nobody listens on right now, below the kernel's ephemeral range (32768 and up), so
/// the outgoing connections of the many agents and clients of a test run cannot take it
/// before the agent binds it. Ports are tried from a point that differs per process and call.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering};
    const FIRST: u16 = 20_000;
    const COUNT: u16 = 12_000;
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let seed = u16::try_from(std::process::id() % u32::from(COUNT)).unwrap_or(0);
    (0..COUNT)
        .map(|_| {
            let step = NEXT.fetch_add(7, Ordering::Relaxed);
            FIRST + (seed.wrapping_mul(131).wrapping_add(step)) % COUNT
        })
        .find(|port| TcpListener::bind(("127.0.0.1", *port)).is_ok())
        .expect("a free loopback port")
}

/// The last `n` lines of `text`.
pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Polls `probe` every 20 ms until it returns `Some`, panicking with `what` after `deadline`.
pub fn wait_for<T>(what: &str, deadline: Duration, probe: impl FnMut() -> Option<T>) -> T {
    wait_for_explained(what, deadline, probe, String::new)
}

/// [`wait_for`], with `explain()` (say the pod and the agent's log) added to the panic message
/// so a timeout in CI can be diagnosed from its output alone.
pub fn wait_for_explained<T>(
    what: &str,
    deadline: Duration,
    mut probe: impl FnMut() -> Option<T>,
    explain: impl FnOnce() -> String,
) -> T {
    let start = Instant::now();
    loop {
        if let Some(value) = probe() {
            return value;
        }
        if start.elapsed() >= deadline {
            panic!(
                "timed out after {deadline:?} waiting for {what}\n{}",
                explain()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The hard eviction thresholds of every test agent whose lines set none. The shared test
/// machine's disk is often below upstream's defaults (10% of nodefs, 15% of imagefs free),
/// which is real disk pressure: every test node would refuse and evict its pods. These
/// still evict when the disk is really about to fill.
pub const TEST_EVICTION_HARD: &str = "evictionHard:\n  memory.available: 100Mi\n  \
    nodefs.available: 512Mi\n  imagefs.available: 512Mi\n  nodefs.inodesFree: 5%\n";

/// A KubeletConfiguration on free loopback ports, plus `extra` lines (with
/// [`TEST_EVICTION_HARD`] unless they set `evictionHard`), plus an optional
/// SergeantConfiguration document.
pub struct TestConfig {
    pub healthz_port: u16,
    pub read_only_port: u16,
    /// The authenticated API port (`port`), free so agents can run side by side.
    pub port: u16,
    /// The address the read-only and authenticated APIs listen on (127.0.0.1).
    pub address: String,
    pub kubelet_extra: String,
    pub sergeant: Option<String>,
}

impl TestConfig {
    pub fn new() -> Self {
        Self {
            healthz_port: free_port(),
            read_only_port: free_port(),
            port: free_port(),
            address: "127.0.0.1".to_owned(),
            kubelet_extra: String::new(),
            sergeant: None,
        }
    }

    pub fn kubelet(mut self, extra: &str) -> Self {
        self.kubelet_extra.push_str(extra);
        self
    }

    pub fn sergeant(mut self, body: &str) -> Self {
        self.sergeant = Some(body.to_owned());
        self
    }

    /// The same ports (the same agent, reconfigured) with other settings: `kubelet_extra`
    /// lines and a SergeantConfiguration naming `adapter` as the runtime adapter.
    pub fn reconfigured(&self, kubelet_extra: String, adapter: &str) -> Self {
        Self {
            healthz_port: self.healthz_port,
            read_only_port: self.read_only_port,
            port: self.port,
            address: self.address.clone(),
            kubelet_extra,
            sergeant: Some(format!("runtimeAdapter: {adapter}\n")),
        }
    }

    pub fn render(&self) -> String {
        let eviction = if self.kubelet_extra.contains("evictionHard:") {
            ""
        } else {
            TEST_EVICTION_HARD
        };
        let mut text = format!(
            "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n\
             address: {}\nhealthzBindAddress: 127.0.0.1\nhealthzPort: {}\nreadOnlyPort: {}\nport: {}\n{}{eviction}",
            self.address, self.healthz_port, self.read_only_port, self.port, self.kubelet_extra
        );
        if let Some(body) = &self.sergeant {
            text.push_str("---\napiVersion: sergeant.dev/v1alpha1\nkind: SergeantConfiguration\n");
            text.push_str(body);
        }
        text
    }
}

/// A running `sergeant` process; killed when dropped if still running.
pub struct Agent {
    child: Child,
    pub dir: tempfile::TempDir,
    pub config_path: PathBuf,
    log_path: PathBuf,
    launch: Launch,
    pub healthz: String,
    pub read_only: String,
}

/// Where the binary under test is.
pub fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_sergeant")
}

impl Agent {
    /// Starts sergeant with `config` and the extra environment `env`; does not wait.
    pub fn spawn(config: &TestConfig, env: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let config_path = dir.path().join("config.yaml");
        fs::write(&config_path, config.render()).expect("config written");
        Self::spawn_with(
            dir,
            config_path,
            config.healthz_port,
            config.read_only_port,
            env,
            &[],
        )
    }

    /// Starts sergeant on an existing configuration file, with extra command-line `args`.
    pub fn spawn_with(
        dir: tempfile::TempDir,
        config_path: PathBuf,
        healthz_port: u16,
        read_only_port: u16,
        env: &[(&str, &str)],
        args: &[&str],
    ) -> Self {
        Self::spawn_launch(
            dir,
            config_path,
            healthz_port,
            read_only_port,
            Launch::new(env, args),
        )
    }

    fn spawn_launch(
        dir: tempfile::TempDir,
        config_path: PathBuf,
        healthz_port: u16,
        read_only_port: u16,
        launch: Launch,
    ) -> Self {
        let log_path = dir.path().join("sergeant.log");
        let child = launch.run(&dir, &config_path, &log_path);
        Self {
            child,
            dir,
            config_path,
            log_path,
            launch,
            healthz: format!("http://127.0.0.1:{healthz_port}"),
            read_only: format!("http://127.0.0.1:{read_only_port}"),
        }
    }

    /// Starts sergeant and waits until its read-only port answers `/healthz` with 200.
    pub fn start(config: &TestConfig, env: &[(&str, &str)]) -> Self {
        Self::start_with_args(config, env, &[])
    }

    /// [`Agent::start`] with extra command-line arguments.
    pub fn start_with_args(config: &TestConfig, env: &[(&str, &str)], args: &[&str]) -> Self {
        Self::start_launch(config, Launch::new(env, args))
    }

    /// [`Agent::start_with_args`] with the process allowed to run on CPU `cpu` only (its
    /// affinity set by `taskset` before sergeant starts), as under `taskset -c` or a systemd
    /// unit's `CPUAffinity=`.
    pub fn start_pinned(
        config: &TestConfig,
        env: &[(&str, &str)],
        args: &[&str],
        cpu: usize,
    ) -> Self {
        Self::start_launch(
            config,
            Launch {
                pinned_cpu: Some(cpu),
                ..Launch::new(env, args)
            },
        )
    }

    fn start_launch(config: &TestConfig, launch: Launch) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let config_path = dir.path().join("config.yaml");
        fs::write(&config_path, config.render()).expect("config written");
        let mut agent = Self::spawn_launch(
            dir,
            config_path,
            config.healthz_port,
            config.read_only_port,
            launch,
        );
        agent.wait_ready();
        agent
    }

    /// Starts the same sergeant again (same configuration, root dir and arguments) after its
    /// process ended, and waits until it is ready.
    pub fn restart_in_place(&mut self) {
        assert!(
            matches!(self.child.try_wait(), Ok(Some(_))),
            "restart needs the old process to have exited"
        );
        self.child = self
            .launch
            .run(&self.dir, &self.config_path, &self.log_path);
        self.wait_ready();
    }

    pub fn wait_ready(&mut self) {
        let url = format!("{}/healthz", self.read_only);
        let deadline = Duration::from_secs(20);
        let start = Instant::now();
        loop {
            if let Ok((200, _)) = try_get(&url) {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("sergeant exited early with {status}:\n{}", self.log());
            }
            assert!(
                start.elapsed() < deadline,
                "sergeant not ready within {deadline:?}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn log(&self) -> String {
        let mut text = String::new();
        if let Ok(mut file) = fs::File::open(&self.log_path) {
            let _ = file.read_to_string(&mut text);
        }
        text
    }

    /// The last `lines` lines of the agent's log.
    pub fn log_tail(&self, lines: usize) -> String {
        last_lines(&self.log(), lines)
    }

    pub fn signal(&self, signal: Signal) {
        kill(Pid::from_raw(self.child.id() as i32), signal).expect("signal delivered");
    }

    /// Waits for the process to exit, up to `deadline`.
    pub fn wait_exit(&mut self, deadline: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait works") {
                return status;
            }
            assert!(
                start.elapsed() < deadline,
                "sergeant did not exit within {deadline:?}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// GET on the read-only port.
    pub fn get(&self, path: &str) -> (u16, String) {
        try_get(&format!("{}{path}", self.read_only))
            .unwrap_or_else(|e| panic!("GET {path}: {e}\n{}", self.log()))
    }

    /// GET on the read-only port, parsed as JSON.
    pub fn get_json(&self, path: &str) -> serde_json::Value {
        let (status, body) = self.get(path);
        assert_eq!(status, 200, "GET {path}: {body}");
        serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("GET {path} is not JSON ({e}): {body}"))
    }

    /// The status line `/debug/supervision` shows for the child at `path`
    /// (`root/runtime/runtime-adapter`); empty when it has none.
    pub fn child_status(&self, path: &str) -> String {
        let tree = self.get_json("/debug/supervision");
        tree_node(&tree, path)["status"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    pub fn config_dir(&self) -> &Path {
        self.dir.path()
    }
}

/// How the binary is run besides its configuration: extra arguments and environment, and the
/// one CPU it is pinned to, if any.
struct Launch {
    args: Vec<String>,
    env: Vec<(String, String)>,
    pinned_cpu: Option<usize>,
}

impl Launch {
    fn new(env: &[(&str, &str)], args: &[&str]) -> Self {
        Self {
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            pinned_cpu: None,
        }
    }

    /// Runs the binary with the configuration, a root dir under `dir` (unless the arguments
    /// name one with `--root-dir`), and the extras; output is appended to the log file.
    fn run(&self, dir: &tempfile::TempDir, config_path: &Path, log_path: &Path) -> Child {
        let log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log_path)
            .expect("log file");
        let mut command = match self.pinned_cpu {
            // taskset sets its own affinity and execs the binary: same process, one CPU.
            Some(cpu) => {
                let mut taskset = Command::new("taskset");
                taskset.arg("--cpu-list").arg(cpu.to_string()).arg(binary());
                taskset
            }
            None => Command::new(binary()),
        };
        command.arg("--config").arg(config_path);
        if !self.args.iter().any(|a| a == "--root-dir") {
            command.arg("--root-dir").arg(dir.path().join("root"));
        }
        command
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log handle"))
            .stderr(log)
            .env_remove("FAILPOINTS");
        for (key, value) in &self.env {
            command.env(key, value);
        }
        command.spawn().expect("sergeant starts")
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        // A failed test shows what the agent was doing, whatever the assertion printed.
        if std::thread::panicking() {
            eprintln!(
                "--- the last lines of the agent's log ---\n{}",
                self.log_tail(80)
            );
        }
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// GET `url`, answering the status and body.
pub fn try_get(url: &str) -> Result<(u16, String), String> {
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .map_err(|e| e.to_string())?;
    let response = client.get(url).send().map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let body = response.text().map_err(|e| e.to_string())?;
    Ok((status, body))
}

/// Runs sergeant to completion on a configuration text, for start-up failures.
pub fn run_to_exit(config_text: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("config.yaml");
    fs::write(&path, config_text).expect("config written");
    let mut child = Command::new(binary())
        .arg("--config")
        .arg(&path)
        .env_remove("FAILPOINTS")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sergeant runs");
    // An agent that accepts the configuration runs on: stop it at the deadline, and the
    // caller sees no exit code.
    let exited = wait_for_exit(&mut child, Duration::from_secs(30));
    if !exited {
        let _ = child.kill();
    }
    let output = child.wait_with_output().expect("sergeant's output");
    let code = if exited { output.status.code() } else { None };
    let stderr =
        String::from_utf8_lossy(&output.stderr).replace(&path.display().to_string(), "CONFIG");
    (code, stderr)
}

/// Waits up to `deadline` for `child` to exit; whether it did.
fn wait_for_exit(child: &mut Child, deadline: Duration) -> bool {
    let until = Instant::now() + deadline;
    while Instant::now() < until {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

static NULL: serde_json::Value = serde_json::Value::Null;

/// Finds the node at `path` (`root/runtime/pleg`) in a `/debug/supervision` tree.
pub fn tree_node<'a>(tree: &'a serde_json::Value, path: &str) -> &'a serde_json::Value {
    if tree["path"] == path {
        return tree;
    }
    tree["children"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|child| {
            let found = tree_node(child, path);
            (!found.is_null()).then_some(found)
        })
        .unwrap_or(&NULL)
}
