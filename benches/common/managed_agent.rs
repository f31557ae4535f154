//! The node agents the managed-mode benchmarks compare, registered with the test control plane
//! on the benchmark's containerd: sergeant through the test harness, and the upstream kubelet
//! of the pinned release with the same isolation (see `isolation.rs`), the same ports
//! (healthz, read-only, TLS API, all on loopback) and the same KubeletConfiguration lines and
//! root directory ([`Setup`]); and waiting for either's Node to be Ready.
#![allow(dead_code)] // each benchmark uses its own part

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::cluster::Cluster;
use crate::harness::free_port;
use crate::harness::managed::{cri_endpoint, Managed};
use crate::harness::TestConfig;
use crate::isolation::{self, Isolation};

/// The agents to compare: sergeant, and the upstream kubelet when `UPSTREAM_KUBELET` names its
/// binary (tests/bench.sh sets it), each with the name its results go under.
pub fn agent_kinds() -> Vec<(&'static str, Option<PathBuf>)> {
    let mut kinds = vec![("sergeant", None)];
    match std::env::var_os("UPSTREAM_KUBELET") {
        Some(binary) => kinds.push(("upstream_kubelet", Some(PathBuf::from(binary)))),
        None => println!("UPSTREAM_KUBELET not set: the upstream kubelet is not measured"),
    }
    kinds
}

/// What an agent runs with besides its Node name and API server, the same for both agents.
pub struct Setup {
    /// KubeletConfiguration lines: the isolation's, and the eviction thresholds.
    pub kubelet: String,
    /// The agent's root directory (`--root-dir`); `None`: a temporary directory of its own.
    pub root_dir: Option<PathBuf>,
    /// Command-line flags of the upstream kubelet that pin what sergeant has fixed and no
    /// configuration field for (cAdvisor's `--housekeeping-interval`).
    pub upstream_flags: Vec<String>,
}

impl Setup {
    /// `isolation`'s lines with the test machine's eviction thresholds, in a temporary root
    /// directory.
    pub fn isolated(isolation: &Isolation) -> Self {
        Self {
            kubelet: isolation.kubelet_config(),
            root_dir: None,
            upstream_flags: Vec::new(),
        }
    }
}

/// The upstream kubelet registered with the control plane; killed when dropped.
pub struct Upstream {
    /// The kubelet's process.
    pub child: Child,
    /// Where its output goes.
    pub log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Upstream {
    /// Starts `binary` as Node `node` with `kubeconfig` (the node credentials the control
    /// plane issues for it), on the benchmark's containerd, with `setup`'s configuration
    /// lines, root directory and flags, writing its log to `log`. Like sergeant's test
    /// configuration, it serves a read-only port besides the healthz and TLS ones.
    pub fn start(
        binary: &Path,
        cluster: &Cluster,
        kubeconfig: &Path,
        node: &str,
        setup: &Setup,
        log: &Path,
    ) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let config = dir.path().join("config.yaml");
        fs::write(
            &config,
            format!(
                "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\naddress: 127.0.0.1\n\
                 healthzPort: {}\nreadOnlyPort: {}\nport: {}\ncontainerRuntimeEndpoint: {}\ncgroupDriver: cgroupfs\n\
                 failSwapOn: false\nfailCgroupV1: false\n{}authentication:\n  anonymous: {{enabled: false}}\n  \
                 x509: {{clientCAFile: {}}}\nauthorization: {{mode: Webhook}}\n",
                free_port(),
                free_port(),
                free_port(),
                cri_endpoint(),
                setup.kubelet,
                cluster.ca_cert().display()
            ),
        )
        .expect("config written");
        let out = fs::File::create(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
        let child = Command::new(binary)
            .arg("--config")
            .arg(&config)
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .arg("--root-dir")
            .arg(
                setup
                    .root_dir
                    .clone()
                    .unwrap_or_else(|| dir.path().join("root")),
            )
            .args(["--hostname-override", node])
            .args(&setup.upstream_flags)
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("log handle"))
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("the upstream kubelet {} starts: {e}", binary.display()));
        Self {
            child,
            log: log.to_owned(),
            _dir: dir,
        }
    }
}

impl Drop for Upstream {
    /// Kills the kubelet and takes off the mounts it left on its temporary root directory (a
    /// bind mount onto itself, and the volumes of pods it did not tear down).
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        isolation::unmount_all(&self._dir.path().join("root"));
    }
}

/// The agent under measurement.
pub enum Agent {
    /// sergeant, through the test harness.
    Sergeant(Box<Managed>),
    /// The upstream kubelet.
    Upstream(Upstream),
}

impl Agent {
    /// Starts sergeant (`binary` `None`) or the upstream kubelet at `binary` as Node `node`,
    /// with `isolation` and the test machine's eviction thresholds, talking to the API server
    /// at `server` (`None`: the shared one). The upstream kubelet's output goes to `log`;
    /// sergeant's stays with the harness ([`Agent::log`]).
    pub fn start(
        cluster: &Cluster,
        binary: Option<&Path>,
        node: &str,
        server: Option<&str>,
        isolation: &Isolation,
        log: &Path,
    ) -> Self {
        let setup = Setup::isolated(isolation);
        Self::start_with(cluster, binary, node, server, &setup, log)
    }

    /// [`Agent::start`] with `setup` in place of the isolation's lines and a temporary root
    /// directory.
    pub fn start_with(
        cluster: &Cluster,
        binary: Option<&Path>,
        node: &str,
        server: Option<&str>,
        setup: &Setup,
        log: &Path,
    ) -> Self {
        match binary {
            None => {
                let config = TestConfig::new().kubelet(&setup.kubelet);
                let root = setup.root_dir.as_ref().map(|d| d.to_string_lossy());
                let args: Vec<&str> = root
                    .as_deref()
                    .map(|root| vec!["--root-dir", root])
                    .unwrap_or_default();
                Agent::Sergeant(Box::new(match server {
                    None => Managed::start_with(node, &[], config, &args),
                    Some(server) => Managed::start_via(server, node, &[], config, &args),
                }))
            }
            Some(binary) => {
                let kubeconfig = match server {
                    None => cluster.node_kubeconfig(node),
                    Some(server) => cluster.node_kubeconfig_at(node, server),
                };
                Agent::Upstream(Upstream::start(
                    binary,
                    cluster,
                    &kubeconfig,
                    node,
                    setup,
                    log,
                ))
            }
        }
    }

    /// The agent's process id.
    pub fn pid(&self) -> u32 {
        match self {
            Agent::Sergeant(managed) => managed.agent.pid(),
            Agent::Upstream(upstream) => upstream.child.id(),
        }
    }

    /// How the agent's process ended, if it did.
    pub fn exited(&mut self) -> Option<String> {
        match self {
            Agent::Sergeant(managed) => {
                // A child that exited is a zombie until the harness reaps it.
                let stat = fs::read_to_string(format!("/proc/{}/stat", managed.agent.pid()))
                    .unwrap_or_default();
                let state = stat.rsplit_once(") ").map(|(_, rest)| rest.chars().next());
                matches!(state, None | Some(Some('Z'))).then(|| "exited".to_owned())
            }
            Agent::Upstream(upstream) => match upstream.child.try_wait() {
                Ok(Some(status)) => Some(status.to_string()),
                Ok(None) => None,
                Err(e) => Some(format!("unknown ({e})")),
            },
        }
    }

    /// The agent's log so far.
    pub fn log(&self) -> String {
        match self {
            Agent::Sergeant(managed) => managed.agent.log(),
            Agent::Upstream(upstream) => fs::read_to_string(&upstream.log).unwrap_or_default(),
        }
    }
}

/// Forgets what an interrupted run left of Node `node`: its pods (force-deleted; they would be
/// adopted) and the Node itself (it would be reused).
pub fn forget_node(cluster: &Cluster, node: &str) {
    let on_node = format!("spec.nodeName={node}");
    cluster.kubectl(&[
        "delete",
        "pods",
        "-n",
        "default",
        "--field-selector",
        &on_node,
        "--grace-period=0",
        "--force",
    ]);
    cluster.kubectl(&["delete", "node", node, "--ignore-not-found"]);
}

/// The status of the Node's condition `kind`, with its reason and message.
pub fn condition(node: &Value, kind: &str) -> Option<String> {
    let all = node["status"]["conditions"].as_array()?;
    let c = all.iter().find(|c| c["type"] == kind)?;
    Some(format!(
        "{}={} ({}: {})",
        kind,
        c["status"].as_str().unwrap_or("?"),
        c["reason"].as_str().unwrap_or(""),
        c["message"].as_str().unwrap_or("")
    ))
}

/// Waits until Node `node` is Ready; says why not when the agent exits first or `deadline`
/// passes.
pub fn wait_ready(
    cluster: &Cluster,
    node: &str,
    agent: &mut Agent,
    deadline: Duration,
) -> Result<Duration, String> {
    let start = Instant::now();
    loop {
        let seen = cluster.get_json(&["node", node]);
        if let Some(n) = &seen {
            let ready = n["status"]["conditions"].as_array().is_some_and(|all| {
                all.iter()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True")
            });
            if ready {
                return Ok(start.elapsed());
            }
        }
        if let Some(status) = agent.exited() {
            return Err(format!(
                "the agent exited ({status}) before Node {node} was Ready"
            ));
        }
        if start.elapsed() > deadline {
            return Err(match seen {
                None => format!("Node {node} was not registered within {deadline:?}"),
                Some(n) => format!(
                    "Node {node} not Ready within {deadline:?}: {}",
                    condition(&n, "Ready").unwrap_or_else(|| "no Ready condition".to_owned())
                ),
            });
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}
