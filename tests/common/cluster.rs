//! The real control plane `tests/run.sh` starts (`tests/control-plane/up.sh`), for the tests of
//! managed mode: its admin credentials, kubectl, and node credentials minted per test node.
//!
//! `tests/run.sh` exports `SERGEANT_CONTROL_PLANE_DIR`, the run dir whose `env` file `up.sh`
//! wrote.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// A running control plane.
pub struct Cluster {
    env: BTreeMap<String, String>,
    dir: PathBuf,
}

impl Cluster {
    /// The control plane of this test run.
    ///
    /// # Panics
    /// When `SERGEANT_CONTROL_PLANE_DIR` is unset or its `env` file is missing: the tests run
    /// through `tests/run.sh`, which starts the control plane.
    pub fn from_env() -> Self {
        let dir = PathBuf::from(std::env::var("SERGEANT_CONTROL_PLANE_DIR").expect(
            "SERGEANT_CONTROL_PLANE_DIR is not set: run the tests through tests/run.sh, which starts the control plane",
        ));
        let text = fs::read_to_string(dir.join("env"))
            .unwrap_or_else(|e| panic!("{}/env: {e}", dir.display()));
        let env = text
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        Self { env, dir }
    }

    fn var(&self, key: &str) -> &str {
        self.env
            .get(key)
            .unwrap_or_else(|| panic!("{key} missing from {}/env", self.dir.display()))
    }

    /// The admin kubeconfig (`system:masters`).
    pub fn admin_kubeconfig(&self) -> PathBuf {
        PathBuf::from(self.var("KUBECONFIG_ADMIN"))
    }

    /// A kubeconfig for node `node` (`system:node:<node>` in `system:nodes`), made on first
    /// use.
    pub fn node_kubeconfig(&self, node: &str) -> PathBuf {
        let pki = self.admin_kubeconfig();
        let pki = pki.parent().expect("the pki dir");
        let file = pki.join(format!("node-{node}.kubeconfig"));
        if !file.exists() {
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/control-plane/pki.sh");
            let port = self
                .var("APISERVER")
                .rsplit(':')
                .next()
                .unwrap_or("6443")
                .to_owned();
            let out = Command::new("flock")
                .arg(pki.join(".pki.lock"))
                .arg("bash")
                .arg(&script)
                .arg(pki)
                .arg(node)
                .arg(&port)
                .output()
                .expect("pki.sh runs");
            assert!(
                out.status.success(),
                "pki.sh for {node}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        file
    }

    /// [`Cluster::node_kubeconfig`] for another API server of this cluster, at `server`
    /// (`https://127.0.0.1:<port>`; the serving certificate covers 127.0.0.1).
    pub fn node_kubeconfig_at(&self, node: &str, server: &str) -> PathBuf {
        let shared = self.node_kubeconfig(node);
        let text =
            fs::read_to_string(&shared).unwrap_or_else(|e| panic!("{}: {e}", shared.display()));
        let port = server.rsplit(':').next().unwrap_or(server);
        let file = shared.with_file_name(format!("node-{node}-at-{port}.kubeconfig"));
        fs::write(&file, text.replace(self.apiserver(), server))
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        file
    }

    /// Runs kubectl as the admin; returns whether it succeeded, and its stdout (or stderr).
    pub fn kubectl(&self, args: &[&str]) -> (bool, String) {
        self.kubectl_as(&self.admin_kubeconfig(), args)
    }

    /// Runs kubectl with `kubeconfig`; returns whether it succeeded, and its stdout (or
    /// stderr when it failed).
    pub fn kubectl_as(&self, kubeconfig: &Path, args: &[&str]) -> (bool, String) {
        let out = Command::new(self.var("KUBECTL"))
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(args)
            .output()
            .expect("kubectl runs");
        let text = if out.status.success() {
            out.stdout
        } else {
            out.stderr
        };
        (
            out.status.success(),
            String::from_utf8_lossy(&text).into_owned(),
        )
    }

    /// Starts kubectl as the admin with `args` (a watch, say), its output piped; the caller
    /// kills it.
    pub fn kubectl_spawn(&self, args: &[&str]) -> Child {
        Command::new(self.var("KUBECTL"))
            .arg("--kubeconfig")
            .arg(self.admin_kubeconfig())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("kubectl runs")
    }

    /// `kubectl get ... -o json` as the admin, parsed; `None` when it failed (not found).
    pub fn get_json(&self, args: &[&str]) -> Option<Value> {
        let mut all = vec!["get"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-o", "json"]);
        let (ok, out) = self.kubectl(&all);
        ok.then(|| serde_json::from_str(&out).expect("kubectl printed JSON"))
    }

    /// Applies `manifest` (YAML) as the admin.
    ///
    /// # Panics
    /// When kubectl refuses it.
    pub fn apply(&self, manifest: &str) {
        let file = tempfile::NamedTempFile::new().expect("a temp file");
        fs::write(file.path(), manifest).expect("manifest written");
        let path = file.path().to_string_lossy().into_owned();
        let (ok, out) = self.kubectl(&["apply", "-f", &path]);
        assert!(ok, "kubectl apply: {out}");
    }

    /// Creates config map `name` in `default` anew, with one key, `key: value` (a leftover of
    /// an interrupted run is deleted first).
    pub fn fresh_config_map(&self, name: &str, immutable: bool) {
        self.kubectl(&[
            "delete",
            "configmap",
            name,
            "-n",
            "default",
            "--ignore-not-found",
        ]);
        self.apply(&format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\nimmutable: {immutable}\ndata:\n  key: value\n"
        ));
    }
}

impl Cluster {
    /// The cluster CA certificate (PEM file), which signs every client certificate the
    /// control plane issues.
    pub fn ca_cert(&self) -> PathBuf {
        PathBuf::from(self.var("CA_CERT"))
    }

    /// A bearer token of service account `default/<name>`, created if missing; bound to the
    /// cluster role `role` when one is given.
    pub fn service_account_token(&self, name: &str, role: Option<&str>) -> String {
        let _ = self.kubectl(&["create", "serviceaccount", name, "-n", "default"]);
        if let Some(role) = role {
            let account = format!("default:{name}");
            let role = format!("--clusterrole={role}");
            let subject = format!("--serviceaccount={account}");
            let _ = self.kubectl(&["create", "clusterrolebinding", name, &role, &subject]);
        }
        let (ok, token) = self.kubectl(&["create", "token", name, "-n", "default"]);
        assert!(ok, "kubectl create token {name}: {token}");
        token.trim().to_owned()
    }

    /// The admin's client certificate and key, PEM, one after the other.
    pub fn admin_identity_pem(&self) -> Vec<u8> {
        use base64::Engine as _;
        let admin = self.admin_kubeconfig();
        let (ok, text) = self.kubectl_as(&admin, &["config", "view", "--raw", "-o", "json"]);
        assert!(ok, "kubectl config view: {text}");
        let config: Value = serde_json::from_str(&text).expect("kubeconfig as JSON");
        let user = &config["users"][0]["user"];
        let mut pem = Vec::new();
        for field in ["client-certificate-data", "client-key-data"] {
            let data = user[field].as_str().expect("embedded admin credentials");
            pem.extend(
                base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .expect("base64 credentials"),
            );
        }
        pem
    }
}

impl Cluster {
    /// The kubectl binary of the control plane, for commands a test runs itself (watches).
    pub fn kubectl_binary(&self) -> PathBuf {
        PathBuf::from(self.var("KUBECTL"))
    }

    /// The API server's URL (`https://127.0.0.1:6443`).
    pub fn apiserver(&self) -> &str {
        self.var("APISERVER")
    }
}

/// A running `kubectl get pods --watch`; killed when dropped.
pub struct PodWatch {
    child: std::process::Child,
    /// Each printed line (trimmed), with when it arrived.
    pub events: std::sync::mpsc::Receiver<(std::time::SystemTime, String)>,
}

impl Drop for PodWatch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Cluster {
    /// Watches the pods of namespace `default` that `selector` picks (kubectl arguments such
    /// as `["-l", "app=web"]`), printing each event with the JSONPath `template`.
    pub fn watch_pods(&self, selector: &[&str], template: &str) -> PodWatch {
        use std::io::{BufRead, BufReader};
        let mut child = Command::new(self.kubectl_binary())
            .arg("--kubeconfig")
            .arg(self.admin_kubeconfig())
            .args(["get", "pods", "-n", "default", "--watch"])
            .args(selector)
            .arg("-o")
            .arg(format!("jsonpath={template}{{\"\\n\"}}"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("kubectl watch runs");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, events) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let arrived = std::time::SystemTime::now();
                if tx.send((arrived, line.trim().to_owned())).is_err() {
                    break;
                }
            }
        });
        PodWatch { child, events }
    }
}
