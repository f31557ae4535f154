//! `SpecError`: why a pod could not be turned into runtime objects or host state.

use std::path::Path;

/// Why a pod (or one of its containers or volumes) could not be translated or prepared. It
/// always names the pod and the precise place at fault, so a bad pod is rejected alone with a
/// message an operator can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// A field of the pod spec holds something sergeant cannot use.
    #[error("pod {pod}: {field}: {reason}")]
    Field {
        /// `namespace/name` of the pod.
        pod: String,
        /// Path of the field, e.g. `spec.containers[0].env[2].valueFrom`.
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A file system operation on behalf of the pod failed.
    #[error("pod {pod}: {path}: {reason}")]
    Host {
        /// `namespace/name` of the pod (or its UID when only that is known).
        pod: String,
        /// The host path involved.
        path: String,
        /// What failed.
        reason: String,
    },
    /// A pod cgroup could not be created, limited or removed.
    #[error("cgroup {cgroup}: {reason}")]
    Cgroup {
        /// The cgroup path, e.g. `/kubepods/burstable/pod<uid>`.
        cgroup: String,
        /// What failed.
        reason: String,
    },
    /// The node configuration cannot serve pods (bad setting, unreadable host file).
    #[error("node configuration: {reason}")]
    Node {
        /// What is wrong.
        reason: String,
    },
}

impl SpecError {
    /// A [`SpecError::Field`] error.
    pub fn field(pod: &str, field: impl Into<String>, reason: impl Into<String>) -> Self {
        SpecError::Field {
            pod: pod.to_string(),
            field: field.into(),
            reason: reason.into(),
        }
    }

    /// A [`SpecError::Host`] error from an I/O error, without the "(os error N)" suffix.
    pub fn host(pod: &str, path: &Path, error: &std::io::Error) -> Self {
        Self::host_reason(pod, path, io_reason(error))
    }

    /// A [`SpecError::Host`] error with a reason of our own.
    pub fn host_reason(pod: &str, path: &Path, reason: impl Into<String>) -> Self {
        SpecError::Host {
            pod: pod.to_string(),
            path: path.display().to_string(),
            reason: reason.into(),
        }
    }

    /// A [`SpecError::Cgroup`] error.
    pub fn cgroup(cgroup: &str, reason: impl Into<String>) -> Self {
        SpecError::Cgroup {
            cgroup: cgroup.to_string(),
            reason: reason.into(),
        }
    }
}

/// "No such file or directory (os error 2)" → "No such file or directory".
pub fn io_reason(error: &std::io::Error) -> String {
    let message = error.to_string();
    match message.rfind(" (os error ") {
        Some(index) if message.ends_with(')') => message[..index].to_string(),
        _ => message,
    }
}
