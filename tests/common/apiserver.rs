//! A kube-apiserver of the shared control plane on a port of its own, started by
//! `tests/control-plane/apiserver.sh` (same binary, etcd and PKI): for tests that stop and
//! start an API server without taking the shared one away from the others, and for benchmarks
//! that need one with flags of their own (an audit log).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::cluster::Cluster;
use super::free_port;

/// How long a kube-apiserver may take to start or to shut down.
pub const APISERVER_DEADLINE: Duration = Duration::from_secs(60);

/// An audit policy that logs every request of a node identity once, when received, with its
/// URI and verb: what a node agent's use of the API server is counted and checked by.
const NODE_AUDIT_POLICY: &str = "apiVersion: audit.k8s.io/v1\nkind: Policy\n\
    omitStages: [ResponseStarted, ResponseComplete, Panic]\nrules:\n\
    - level: Metadata\n  userGroups: [\"system:nodes\"]\n- level: None\n";

/// A kube-apiserver of the shared control plane, on a port of its own, that a test may stop
/// and start. It is killed when dropped, however the test ends.
pub struct PrivateApiserver {
    run_dir: String,
    port: u16,
    extra_args: String,
    log: tempfile::NamedTempFile,
    child: Option<Child>,
}

impl PrivateApiserver {
    /// Starts it on a free port, with `extra_args` on top of the shared server's flags, and
    /// waits until it is ready.
    pub fn start(cluster: &Cluster, extra_args: &str) -> Self {
        let run_dir = std::env::var("SERGEANT_CONTROL_PLANE_DIR")
            .expect("SERGEANT_CONTROL_PLANE_DIR is set (Cluster::from_env checked it)");
        let mut server = Self {
            run_dir,
            port: free_port(),
            extra_args: extra_args.to_owned(),
            log: tempfile::NamedTempFile::new().expect("a log file"),
            child: None,
        };
        server
            .launch(cluster)
            .unwrap_or_else(|e| panic!("the private kube-apiserver: {e}"));
        server
    }

    /// [`PrivateApiserver::start`] with an audit log (JSON, one event per line, written as each
    /// request is received) of every request a node identity makes, at `dir/audit.log`, whose
    /// path comes back too.
    pub fn start_node_audited(cluster: &Cluster, dir: &Path) -> (Self, PathBuf) {
        let policy = dir.join("audit-policy.yaml");
        fs::write(&policy, NODE_AUDIT_POLICY).expect("audit policy written");
        let audit_log = dir.join("audit.log");
        let server = Self::start(
            cluster,
            &format!(
                "--audit-policy-file={} --audit-log-path={} --audit-log-format=json --audit-log-mode=blocking",
                policy.display(),
                audit_log.display()
            ),
        );
        (server, audit_log)
    }

    /// Where it serves.
    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }

    /// Starts the process (again, on the same port) and waits for `/readyz`; an error instead
    /// of a panic, so a guard can call it while the test unwinds.
    pub fn launch(&mut self, cluster: &Cluster) -> Result<(), String> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/control-plane/apiserver.sh");
        let log = fs::OpenOptions::new()
            .append(true)
            .open(self.log.path())
            .map_err(|e| format!("{}: {e}", self.log.path().display()))?;
        let stderr = log.try_clone().map_err(|e| e.to_string())?;
        let extra = std::env::var("CP_APISERVER_ARGS").unwrap_or_default();
        let child = Command::new("bash")
            .arg(script)
            .args(["--run-dir", &self.run_dir, "--port", &self.port.to_string()])
            .env("CP_APISERVER_ARGS", format!("{extra} {}", self.extra_args))
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("apiserver.sh: {e}"))?;
        self.child = Some(child);
        let url = self.url();
        let start = Instant::now();
        loop {
            let (ok, out) = cluster.kubectl(&["--server", &url, "get", "--raw", "/readyz"]);
            if ok && out.trim() == "ok" {
                return Ok(());
            }
            let exited = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if let Some(status) = exited {
                self.child = None;
                return Err(format!(
                    "exited with {status} before it was ready:\n{}",
                    self.tail()
                ));
            }
            if start.elapsed() > APISERVER_DEADLINE {
                return Err(format!(
                    "not ready within {APISERVER_DEADLINE:?}:\n{}",
                    self.tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stops the process with SIGTERM (SIGKILL after the deadline) and reaps it; returns
    /// whether it exited on SIGTERM.
    pub fn terminate(&mut self) -> bool {
        let Some(mut child) = self.child.take() else {
            return true;
        };
        let pid = Pid::from_raw(i32::try_from(child.id()).expect("a pid"));
        let _ = kill(pid, Signal::SIGTERM);
        let start = Instant::now();
        while start.elapsed() < APISERVER_DEADLINE {
            if let Ok(Some(_)) = child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        false
    }

    /// Whether its process is running (it was not stopped, or was started again).
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// The end of its log, for failure messages.
    pub fn tail(&self) -> String {
        super::last_lines(&fs::read_to_string(self.log.path()).unwrap_or_default(), 30)
    }
}

impl Drop for PrivateApiserver {
    fn drop(&mut self) {
        self.terminate();
    }
}
