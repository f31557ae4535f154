//! The record of one fake container and the CRI views of it (status, list entry). A hollow
//! container runs nothing: "running" is a state and a timestamp.

use std::collections::HashMap;
use std::path::Path;

use sergeant_messages::runtime::cri;

use super::labels;
use super::reference::{image_id, repo_digest};

/// Reason of a container that exited with code 0.
const REASON_COMPLETED: &str = "Completed";
/// Reason of a container that exited with any other code.
const REASON_ERROR: &str = "Error";

/// Where a container is in its life, with the times and exit that go with it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Phase {
    Created,
    Running {
        started_at: i64,
    },
    Exited {
        started_at: i64,
        finished_at: i64,
        exit_code: i32,
    },
}

impl Phase {
    /// The CRI state of the phase.
    pub(super) fn state(self) -> cri::ContainerState {
        match self {
            Self::Created => cri::ContainerState::ContainerCreated,
            Self::Running { .. } => cri::ContainerState::ContainerRunning,
            Self::Exited { .. } => cri::ContainerState::ContainerExited,
        }
    }
}

/// One container: only what its status and list entries report.
#[derive(Debug)]
pub(super) struct Container {
    pub(super) sandbox_id: String,
    pub(super) metadata: cri::ContainerMetadata,
    /// The normalized reference of its image.
    pub(super) image: String,
    pub(super) created_at: i64,
    pub(super) phase: Phase,
    pub(super) log_path: String,
    pub(super) labels: HashMap<String, String>,
    pub(super) annotations: HashMap<String, String>,
    /// Its Linux resources, as created or last updated; reported in its status.
    pub(super) resources: Option<cri::LinuxContainerResources>,
}

impl Container {
    /// Ends a running container with `exit_code`; other phases are left as they are. True
    /// when the container was running.
    pub(super) fn exit(&mut self, finished_at: i64, exit_code: i32) -> bool {
        let Phase::Running { started_at } = self.phase else {
            return false;
        };
        self.phase = Phase::Exited {
            started_at,
            finished_at,
            exit_code,
        };
        true
    }

    /// Whether the container passes a `ListContainers` filter.
    pub(super) fn passes(&self, id: &str, filter: &cri::ContainerFilter) -> bool {
        (filter.id.is_empty() || filter.id == id)
            && (filter.pod_sandbox_id.is_empty() || filter.pod_sandbox_id == self.sandbox_id)
            && filter
                .state
                .as_ref()
                .is_none_or(|wanted| wanted.state == self.phase.state() as i32)
            && labels::matches(&self.labels, &filter.label_selector)
    }

    fn image_spec(&self) -> cri::ImageSpec {
        cri::ImageSpec {
            image: self.image.clone(),
            ..Default::default()
        }
    }

    /// The `ListContainers` entry.
    pub(super) fn entry(&self, id: &str) -> cri::Container {
        cri::Container {
            id: id.to_string(),
            pod_sandbox_id: self.sandbox_id.clone(),
            metadata: Some(self.metadata.clone()),
            image: Some(self.image_spec()),
            image_ref: image_id(&self.image),
            state: self.phase.state() as i32,
            created_at: self.created_at,
            labels: self.labels.clone(),
            annotations: self.annotations.clone(),
            image_id: image_id(&self.image),
        }
    }

    /// The `ContainerStatus` answer.
    pub(super) fn status(&self, id: &str) -> cri::ContainerStatus {
        let (started_at, finished_at, exit_code) = match self.phase {
            Phase::Created => (0, 0, 0),
            Phase::Running { started_at } => (started_at, 0, 0),
            Phase::Exited {
                started_at,
                finished_at,
                exit_code,
            } => (started_at, finished_at, exit_code),
        };
        let reason = match self.phase {
            Phase::Exited { exit_code: 0, .. } => REASON_COMPLETED,
            Phase::Exited { .. } => REASON_ERROR,
            Phase::Created | Phase::Running { .. } => "",
        };
        cri::ContainerStatus {
            id: id.to_string(),
            metadata: Some(self.metadata.clone()),
            state: self.phase.state() as i32,
            created_at: self.created_at,
            started_at,
            finished_at,
            exit_code,
            image: Some(self.image_spec()),
            image_ref: repo_digest(&self.image),
            image_id: image_id(&self.image),
            reason: reason.to_string(),
            labels: self.labels.clone(),
            annotations: self.annotations.clone(),
            log_path: self.log_path.clone(),
            resources: self.resources.clone().map(|linux| cri::ContainerResources {
                linux: Some(linux),
                windows: None,
            }),
            ..Default::default()
        }
    }
}

/// The container log path as containerd computes it: the sandbox log directory joined with
/// the container's own (relative) log path.
pub(super) fn log_path(
    sandbox: Option<&cri::PodSandboxConfig>,
    config: &cri::ContainerConfig,
) -> String {
    match sandbox.map(|sandbox| sandbox.log_directory.as_str()) {
        Some(directory) if !directory.is_empty() && !config.log_path.is_empty() => {
            Path::new(directory)
                .join(&config.log_path)
                .to_string_lossy()
                .into_owned()
        }
        _ => config.log_path.clone(),
    }
}
