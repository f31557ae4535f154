//! A sergeant in managed mode against the real control plane and containerd, for the tests of
//! pods from the API server: it creates pods bound to its node (no scheduler involved), reads
//! them back from the API server, and on drop deletes them (through sergeant, so their
//! containers go too) and its Node object.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::cluster::Cluster;
use super::{wait_for, wait_for_explained, Agent, TestConfig};

/// How long a pod may take to reach the state a test waits for.
pub const DEADLINE: Duration = Duration::from_secs(60);
/// busybox httpd on :8080, in the local registry.
pub const HTTPD: &str = "127.0.0.1:5000/sergeant/httpd:1.0";

/// A pod spec (for [`Managed::create`]) running `sleep` in one container, `c`.
pub fn sleeper() -> String {
    format!(
        "  containers:\n  - name: c\n    image: {}\n    command: [\"sleep\", \"3600\"]\n",
        super::node::SHELL
    )
}

/// The CRI endpoint under test.
pub fn cri_endpoint() -> String {
    std::env::var("SERGEANT_CRI_ENDPOINT").expect(
        "SERGEANT_CRI_ENDPOINT is not set: run the tests through tests/run.sh, which starts containerd",
    )
}

/// A managed sergeant named `<prefix>-<tag>`.
pub struct Managed {
    pub cluster: Cluster,
    pub node: String,
    pub agent: Agent,
    /// The agent's configuration (its ports).
    pub config: TestConfig,
}

impl Managed {
    /// A node named `pods-<tag>` with environment `env`.
    pub fn start(tag: &str, env: &[(&str, &str)]) -> Self {
        Self::start_with(&format!("pods-{tag}"), env, TestConfig::new(), &[])
    }

    /// A node named `node` with environment `env` whose kubelet API the API server can reach
    /// (for `kubectl logs`, `exec`, `attach`): it listens on every address and trusts the
    /// cluster CA for the API server's client certificate. `kubelet_extra` adds configuration
    /// lines.
    pub fn reachable(node: &str, env: &[(&str, &str)], kubelet_extra: &str) -> Self {
        let ca = Cluster::from_env().ca_cert();
        let mut config = TestConfig::new().kubelet(&format!(
            "{kubelet_extra}authentication:\n  x509:\n    clientCAFile: {}\n",
            ca.display()
        ));
        config.address = "0.0.0.0".to_owned();
        Self::start_with(node, env, config, &[])
    }

    /// A node named `node` with environment `env`, configuration `config` (the runtime
    /// endpoint is added) and `extra_args` on its command line.
    pub fn start_with(
        node: &str,
        env: &[(&str, &str)],
        config: TestConfig,
        extra_args: &[&str],
    ) -> Self {
        Self::launch(node, env, config, extra_args, None, &cri_endpoint())
    }

    /// A node named `node` with configuration `config` on the containerd at `endpoint` (one
    /// the test started itself).
    pub fn start_on(endpoint: &str, node: &str, config: TestConfig) -> Self {
        Self::launch(node, &[], config, &[], None, endpoint)
    }

    /// [`Managed::start_with`] with sergeant talking to another API server of the cluster, at
    /// `server`, while the test's kubectl keeps using the shared one (same etcd, same objects).
    pub fn start_via(
        server: &str,
        node: &str,
        env: &[(&str, &str)],
        config: TestConfig,
        extra_args: &[&str],
    ) -> Self {
        Self::launch(node, env, config, extra_args, Some(server), &cri_endpoint())
    }

    fn launch(
        node: &str,
        env: &[(&str, &str)],
        config: TestConfig,
        extra_args: &[&str],
        server: Option<&str>,
        endpoint: &str,
    ) -> Self {
        let cluster = Cluster::from_env();
        let kubeconfig = match server {
            Some(server) => cluster.node_kubeconfig_at(node, server),
            None => cluster.node_kubeconfig(node),
        };
        let kubeconfig = kubeconfig.to_string_lossy().into_owned();
        // Pods left by an interrupted run would be adopted and confuse the test.
        cluster.kubectl(&[
            "delete",
            "pods",
            "-l",
            &format!("sergeant-test={node}"),
            "--grace-period=0",
            "--force",
        ]);
        let config = config.kubelet(&format!("containerRuntimeEndpoint: {endpoint}\n"));
        let mut args = vec!["--hostname-override", node, "--kubeconfig", &kubeconfig];
        args.extend_from_slice(extra_args);
        let agent = Agent::start_with_args(&config, env, &args);
        Self {
            cluster,
            node: node.to_owned(),
            agent,
            config,
        }
    }

    /// Creates the pod `name` bound to this node with the spec lines `spec` (indented two
    /// spaces); its grace period is 1 s unless `spec` sets one. Returns its UID.
    pub fn create(&self, name: &str, spec: &str) -> String {
        let grace = if spec.contains("terminationGracePeriodSeconds") {
            ""
        } else {
            "  terminationGracePeriodSeconds: 1\n"
        };
        self.cluster.apply(&format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: default\n  labels:\n    sergeant-test: {node}\nspec:\n  nodeName: {node}\n{grace}{spec}",
            node = self.node
        ));
        let pod = self.pod(name).expect("the pod was created");
        pod["metadata"]["uid"].as_str().expect("a UID").to_owned()
    }

    /// Patches pod `name` through its subresource `subresource` (`status`, `resize`,
    /// `ephemeralcontainers`) with the strategic merge patch `patch`, as kubectl and the e2e
    /// suite do; the API server must take it.
    pub fn patch_subresource(&self, name: &str, subresource: &str, patch: &Value) {
        let patch = patch.to_string();
        let (ok, out) = self.cluster.kubectl(&[
            "patch",
            "pod",
            name,
            "-n",
            "default",
            &format!("--subresource={subresource}"),
            "--type=strategic",
            "-p",
            &patch,
        ]);
        assert!(ok, "the {subresource} subresource took {patch}: {out}");
    }

    /// The API server's copy of pod `name`.
    pub fn pod(&self, name: &str) -> Option<Value> {
        self.cluster.get_json(&["pod", name, "-n", "default"])
    }

    /// Waits until the API server's copy of pod `name` passes `check`.
    pub fn wait_pod(&self, name: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
        wait_for_explained(
            &format!("{name}: {what}"),
            DEADLINE,
            || self.pod(name).filter(|p| check(p)),
            || {
                format!(
                    "pod status: {}\nlast lines of the agent's log:\n{}",
                    self.pod(name)
                        .map_or_else(|| "absent".to_owned(), |p| p["status"].to_string()),
                    self.agent.log_tail(60)
                )
            },
        )
    }

    /// The events about pod `name` (in `default`) with UID `uid` — not those of an earlier pod
    /// of the same name — as `kubectl get events` lists them.
    pub fn events(&self, name: &str, uid: &str) -> Vec<Value> {
        let selector = format!("involvedObject.name={name},involvedObject.uid={uid}");
        self.cluster
            .get_json(&["events", "-n", "default", "--field-selector", &selector])
            .and_then(|list| list["items"].as_array().cloned())
            .unwrap_or_default()
    }

    /// Waits until pod `name` (`uid`) has an event with `reason` passing `check`, and returns
    /// it.
    pub fn wait_event(
        &self,
        (name, uid): (&str, &str),
        reason: &str,
        check: impl Fn(&Value) -> bool,
    ) -> Value {
        wait_for(&format!("{name}: a {reason} event"), DEADLINE, || {
            self.events(name, uid)
                .into_iter()
                .find(|e| e["reason"] == reason && check(e))
        })
    }

    /// The value of the metric line starting with `prefix` on `/metrics`.
    pub fn metric(&self, prefix: &str) -> Option<f64> {
        let (_, text) = self.agent.get("/metrics");
        text.lines()
            .find(|l| l.starts_with(prefix))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
    }
}

impl Drop for Managed {
    fn drop(&mut self) {
        let selector = format!("sergeant-test={}", self.node);
        self.cluster
            .kubectl(&["delete", "pods", "-l", &selector, "--wait=false"]);
        let deadline = Instant::now() + DEADLINE;
        while Instant::now() < deadline {
            let (ok, out) = self
                .cluster
                .kubectl(&["get", "pods", "-l", &selector, "-o", "name"]);
            if ok && out.trim().is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        self.cluster.kubectl(&[
            "delete",
            "pods",
            "-l",
            &selector,
            "--grace-period=0",
            "--force",
        ]);
        self.cluster
            .kubectl(&["delete", "node", &self.node, "--ignore-not-found"]);
    }
}
