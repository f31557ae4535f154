//! A standalone sergeant on the real containerd with a static pod directory, for the tests that
//! run pods: write manifests, read the pods back from `/pods`, and leave no container behind.
//!
//! Needs the private containerd `tests/run.sh` starts (SERGEANT_CRI_ENDPOINT) and its local
//! registry with the test images.

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{try_get, wait_for, Agent, TestConfig};

/// How long a pod may take to reach the state a test waits for.
pub const POD_DEADLINE: Duration = Duration::from_secs(60);
/// A busybox-based image with `sh`, in the local registry.
pub const SHELL: &str = "127.0.0.1:5000/sergeant/shell:1.0";

/// sergeant with a static pod directory and a fast crash-loop back-off.
pub struct Node {
    pub agent: Agent,
    /// The authenticated API's base URL (`https://127.0.0.1:<port>`, a self-signed certificate).
    pub api: String,
    manifests: PathBuf,
    node_name: String,
}

impl Node {
    /// A node named `node-<tag>`.
    pub fn start(tag: &str) -> Self {
        Self::start_with(tag, "")
    }

    /// A node named `node-<tag>` whose KubeletConfiguration also has the lines `kubelet_extra`.
    pub fn start_with(tag: &str, kubelet_extra: &str) -> Self {
        Self::start_with_env(tag, kubelet_extra, &[])
    }

    /// [`Node::start_with`] with the extra environment `env` (`FAILPOINTS`, say).
    pub fn start_with_env(tag: &str, kubelet_extra: &str, env: &[(&str, &str)]) -> Self {
        let endpoint = std::env::var("SERGEANT_CRI_ENDPOINT")
            .expect("SERGEANT_CRI_ENDPOINT is not set: run the tests through tests/run.sh, which starts containerd");
        Self::start_on(&endpoint, tag, kubelet_extra, env)
    }

    /// [`Node::start_with_env`] on the containerd at `endpoint` (one a test started itself).
    pub fn start_on(endpoint: &str, tag: &str, kubelet_extra: &str, env: &[(&str, &str)]) -> Self {
        let manifests = tempfile::tempdir().expect("a manifest dir").keep();
        let node_name = format!("node-{tag}");
        let config = TestConfig::new()
            .kubelet(&format!(
                "staticPodPath: {}\ncontainerRuntimeEndpoint: {endpoint}\ncrashLoopBackOff:\n  maxContainerRestartPeriod: 4s\n{kubelet_extra}",
                manifests.display()
            ))
            .sergeant("crashLoopBackOff:\n  initialPeriod: 1s\n");
        let agent = Agent::start_with_args(&config, env, &["--hostname-override", &node_name]);
        Self {
            agent,
            api: format!("https://127.0.0.1:{}", config.port),
            manifests,
            node_name,
        }
    }

    /// Puts a manifest in place atomically, so it is never read half-written.
    pub fn write(&self, file: &str, manifest: &str) {
        let tmp = self.manifests.join(format!(".{file}.tmp"));
        fs::write(&tmp, manifest).expect("manifest written");
        fs::rename(&tmp, self.manifests.join(file)).expect("manifest moved in place");
    }

    pub fn remove(&self, file: &str) {
        fs::remove_file(self.manifests.join(file)).expect("manifest removed");
    }

    /// The pod `name` (before the node suffix) from `/pods`, if listed.
    pub fn pod(&self, name: &str) -> Option<Value> {
        let full = format!("{name}-{}", self.node_name);
        let list = self.agent.get_json("/pods");
        list["items"]
            .as_array()?
            .iter()
            .find(|p| p["metadata"]["name"] == full.as_str())
            .cloned()
    }

    /// Waits until the pod `name` passes `check`, and returns it.
    pub fn wait_pod(&self, name: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
        wait_for(&format!("{name}: {what}"), POD_DEADLINE, || {
            self.pod(name).filter(|p| check(p))
        })
    }
}

impl Drop for Node {
    /// Removes every manifest and waits until sergeant has terminated the pods, so no test
    /// leaves containers behind on the shared containerd.
    fn drop(&mut self) {
        if let Ok(entries) = fs::read_dir(&self.manifests) {
            for entry in entries.flatten() {
                let _ = fs::remove_file(entry.path());
            }
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            let gone = try_get(&format!("{}/pods", self.agent.read_only))
                .ok()
                .and_then(|(_, body)| serde_json::from_str::<Value>(&body).ok())
                .is_some_and(|list| list["items"].as_array().is_some_and(Vec::is_empty));
            if gone {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = fs::remove_dir_all(&self.manifests);
    }
}

/// The pod's `status.phase`.
pub fn phase(pod: &Value) -> &str {
    pod["status"]["phase"].as_str().unwrap_or_default()
}

/// The status (`True`, `False`, …) of the pod's condition `kind` (`Ready`, …); empty when the
/// pod has none.
pub fn condition<'a>(pod: &'a Value, kind: &str) -> &'a str {
    pod["status"]["conditions"]
        .as_array()
        .and_then(|all| all.iter().find(|c| c["type"] == kind))
        .and_then(|c| c["status"].as_str())
        .unwrap_or_default()
}

/// The status of container `name` in the pod's status list `field` (`containerStatuses`, …).
pub fn container<'a>(pod: &'a Value, field: &str, name: &str) -> &'a Value {
    pod["status"][field]
        .as_array()
        .and_then(|all| all.iter().find(|c| c["name"] == name))
        .unwrap_or(&Value::Null)
}

/// The manifest of pod `name`: one container `main` that sleeps an hour.
pub fn sleeper(name: &str) -> String {
    manifest(
        name,
        &format!(
            "  containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n"
        ),
    )
}

/// A pod manifest; its grace period is 1 s unless `spec` sets one, so cleanup is quick.
pub fn manifest(name: &str, spec: &str) -> String {
    let grace = if spec.contains("terminationGracePeriodSeconds") {
        ""
    } else {
        "  terminationGracePeriodSeconds: 1\n"
    };
    format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n{grace}{spec}")
}
