//! What the runtime shows of one pod: its sandboxes and containers, found by the pod UID label.
//! This is the "observed" half of every plan, and all a restarted agent needs to adopt a pod.

use k8s_cri::v1 as cri;

use crate::labels;

/// One container of the pod as the runtime shows it.
#[derive(Debug, Clone)]
pub struct ObservedContainer {
    /// The sandbox it runs in.
    pub sandbox_id: String,
    /// Its full status, labels and annotations included.
    pub status: cri::ContainerStatus,
}

impl ObservedContainer {
    /// The container's name in the pod spec.
    #[must_use]
    pub fn name(&self) -> &str {
        self.status
            .labels
            .get(labels::CONTAINER_NAME)
            .map_or("", String::as_str)
    }

    /// The CRI state.
    #[must_use]
    pub fn state(&self) -> cri::ContainerState {
        cri::ContainerState::try_from(self.status.state)
            .unwrap_or(cri::ContainerState::ContainerUnknown)
    }

    /// The hash of the container spec it was created from (`io.kubernetes.container.hash`),
    /// to tell a container whose spec changed since.
    #[must_use]
    pub fn spec_hash(&self) -> Option<&str> {
        self.status
            .annotations
            .get(labels::CONTAINER_HASH)
            .map(String::as_str)
    }

    /// The restart count recorded when it was created.
    #[must_use]
    pub fn restart_count(&self) -> u32 {
        self.status
            .annotations
            .get(labels::CONTAINER_RESTART_COUNT)
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }
}

/// Everything the runtime has of one pod.
#[derive(Debug, Clone, Default)]
pub struct PodRuntime {
    /// Every sandbox of the pod, newest first.
    pub sandboxes: Vec<cri::PodSandbox>,
    /// The status of the newest sandbox.
    pub sandbox_status: Option<cri::PodSandboxStatus>,
    /// Every container of the pod, in any sandbox, newest first.
    pub containers: Vec<ObservedContainer>,
}

impl PodRuntime {
    /// The pod's IP, from the newest sandbox's network status.
    #[must_use]
    pub fn pod_ip(&self) -> Option<String> {
        self.sandbox_status
            .as_ref()
            .and_then(|s| s.network.as_ref())
            .map(|n| n.ip.clone())
            .filter(|ip| !ip.is_empty())
    }

    /// The newest sandbox, if it is ready.
    #[must_use]
    pub fn ready_sandbox(&self) -> Option<&cri::PodSandbox> {
        self.sandboxes
            .first()
            .filter(|s| s.state == cri::PodSandboxState::SandboxReady as i32)
    }

    /// The newest container called `name` in sandbox `sandbox_id`, and the one before it.
    #[must_use]
    pub fn latest(&self, sandbox_id: &str, name: &str) -> Option<&ObservedContainer> {
        self.containers
            .iter()
            .find(|c| c.sandbox_id == sandbox_id && c.name() == name)
    }

    /// The newest container called `name` in any sandbox (for restart counts across sandboxes).
    #[must_use]
    pub fn latest_anywhere(&self, name: &str) -> Option<&ObservedContainer> {
        self.containers.iter().find(|c| c.name() == name)
    }

    /// The containers that are running.
    pub fn running(&self) -> impl Iterator<Item = &ObservedContainer> {
        self.containers
            .iter()
            .filter(|c| c.state() == cri::ContainerState::ContainerRunning)
    }
}
