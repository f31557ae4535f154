//! [`PodError`]: why a pod sync stopped before its plan was carried out, or why a pod could not
//! be stopped and removed. The pod actor tells the kinds apart: it logs and counts each by its
//! [`PodError::cause`] and retries soon; a runtime outage ([`PodError::is_outage`]) is the
//! node's trouble, a bad spec or volume the pod's.

use super::file_work::Unfinished;
use super::interrupt::Interrupted;
use sergeant_core::runtime_class::RuntimeClassError;
use sergeant_core::spec::SpecError;
use sergeant_core::volumes::VolumeError;
use sergeant_messages::runtime_error::RuntimeError;

/// Why work on one pod failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PodError {
    /// A runtime call failed: the runtime is unreachable or too slow (an outage), or it
    /// refused the call.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The pod's spec cannot become a runtime configuration, or the node state it needs (its
    /// cgroup, its directory) cannot be made.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// Volumes of the pod could not be set up; each one was a `FailedMount` event.
    #[error("{}", join(.0))]
    Volumes(Vec<VolumeError>),
    /// Blocking file work did not finish (its task panicked or was cancelled).
    #[error(transparent)]
    Unfinished(#[from] Unfinished),
    /// The sandbox the runtime just ran is not ready.
    #[error("the new sandbox {0} is not ready")]
    SandboxNotReady(String),
    /// The RuntimeClass the pod names gives no handler now; its sandbox is not made.
    #[error(transparent)]
    RuntimeClass(#[from] RuntimeClassError),
}

impl PodError {
    /// Whether the runtime is out (unreachable, or past its deadline): nothing about the pod
    /// is wrong, and a retry may succeed as soon as the runtime is back.
    #[must_use]
    pub fn is_outage(&self) -> bool {
        matches!(self, Self::Runtime(error) if error.is_transient())
    }

    /// The kind of failure, as the `cause` label of `sergeant_pod_sync_failures_total`.
    #[must_use]
    pub fn cause(&self) -> &'static str {
        match self {
            Self::Runtime(_) if self.is_outage() => "runtime_outage",
            Self::Runtime(_) | Self::SandboxNotReady(_) => "runtime",
            Self::Spec(SpecError::Field { .. }) => "spec",
            Self::Spec(_) | Self::Unfinished(_) => "node",
            Self::Volumes(_) => "volume",
            Self::RuntimeClass(_) => "runtime_class",
        }
    }
}

/// Why a sync (or a step of it) stopped early.
#[derive(Debug)]
pub(super) enum Stopped {
    /// The pod is being stopped.
    Interrupted,
    /// A failure.
    Failed(PodError),
}

impl From<Interrupted> for Stopped {
    fn from(_: Interrupted) -> Self {
        Self::Interrupted
    }
}

impl From<PodError> for Stopped {
    fn from(error: PodError) -> Self {
        Self::Failed(error)
    }
}

impl From<RuntimeError> for Stopped {
    fn from(error: RuntimeError) -> Self {
        Self::Failed(error.into())
    }
}

impl From<SpecError> for Stopped {
    fn from(error: SpecError) -> Self {
        Self::Failed(error.into())
    }
}

fn join(failures: &[VolumeError]) -> String {
    failures
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outage_is_told_from_a_bad_spec_and_a_volume() {
        let outage = PodError::from(RuntimeError::Unavailable {
            operation: "run_pod_sandbox",
            message: "connection refused".to_owned(),
        });
        let refused = PodError::from(RuntimeError::InvalidArgument {
            operation: "run_pod_sandbox",
            message: "bad".to_owned(),
        });
        let spec = PodError::from(SpecError::field("default/web", "spec.volumes[0]", "no"));
        let cgroup = PodError::from(SpecError::cgroup("/kubepods/podx", "read-only"));
        let volume = |name: &str| VolumeError {
            pod: "default/web".to_owned(),
            volume: name.to_owned(),
            kind: "configMap",
            reason: "not found".to_owned(),
        };
        let volumes = PodError::Volumes(vec![volume("a"), volume("b")]);
        let causes: Vec<(&str, bool)> = [&outage, &refused, &spec, &cgroup, &volumes]
            .iter()
            .map(|e| (e.cause(), e.is_outage()))
            .collect();
        assert_eq!(
            causes,
            vec![
                ("runtime_outage", true),
                ("runtime", false),
                ("spec", false),
                ("node", false),
                ("volume", false),
            ]
        );
        assert_eq!(
            volumes.to_string(),
            format!("{}; {}", volume("a"), volume("b")),
            "every failed volume is named"
        );
    }
}
