//! One monitoring pass: list this node's running containers through the runtime port, rotate
//! each one's log that is full, and have the runtime reopen it. A container that fails is
//! logged and counted; it never stops the others.

use std::path::PathBuf;
use std::time::SystemTime;

use futures::StreamExt;
use sergeant_messages::runtime::cri;
use sergeant_messages::runtime_error::RuntimeError;

use crate::runtime::RuntimePort;
use sergeant_core::labels;
use sergeant_host::log_rotation::{self, Checked, Policy, RotateError};

/// Counts log rotations that completed (the runtime reopened the log).
pub(super) const ROTATIONS: &str = "sergeant_container_log_rotations_total";
/// Counts containers whose log could not be checked or rotated, by the `stage` that failed.
pub(super) const FAILURES: &str = "sergeant_container_log_rotation_failures_total";

/// What one pass did, for the actor's status.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Summary {
    /// Running containers looked at.
    pub(super) checked: usize,
    /// Logs rotated.
    pub(super) rotated: usize,
    /// Containers whose log could not be checked or rotated.
    pub(super) failed: usize,
}

/// What became of one container's log.
enum Outcome {
    Unchanged,
    Rotated,
    Failed,
}

/// The container a log belongs to, as named in warnings.
struct Owner {
    id: String,
    pod: String,
    container: String,
}

impl Owner {
    fn of(container: &cri::Container) -> Self {
        let label = |key: &str| container.labels.get(key).cloned().unwrap_or_default();
        Self {
            id: container.id.clone(),
            pod: format!(
                "{}/{}",
                label(labels::POD_NAMESPACE),
                label(labels::POD_NAME)
            ),
            container: label(labels::CONTAINER_NAME),
        }
    }

    /// Logs why this container's log was not rotated, and counts it under `stage`.
    fn failed(&self, stage: &'static str, path: &str, error: &dyn std::fmt::Display) -> Outcome {
        tracing::warn!(
            pod = %self.pod,
            container = %self.container,
            container_id = %self.id,
            path,
            stage,
            "container log not rotated: {error}"
        );
        metrics::counter!(FAILURES, "stage" => stage).increment(1);
        Outcome::Failed
    }
}

/// Checks the log of every running container of `node`, up to `workers` at a time.
///
/// # Errors
/// [`RuntimeError`] when the containers cannot be listed; a single container's failure is
/// logged, counted and summarized instead.
pub(super) async fn run(
    port: RuntimePort,
    node: String,
    policy: Policy,
    workers: usize,
) -> Result<Summary, RuntimeError> {
    let listed = port
        .call(cri::ListContainersRequest {
            filter: Some(cri::ContainerFilter {
                state: Some(cri::ContainerStateValue {
                    state: cri::ContainerState::ContainerRunning as i32,
                }),
                label_selector: [(labels::NODE.to_owned(), node)].into(),
                ..Default::default()
            }),
        })
        .await?;
    let outcomes: Vec<Outcome> = futures::stream::iter(listed.containers)
        .map(|container| check(&port, container, policy))
        .buffer_unordered(workers.max(1))
        .collect()
        .await;
    let mut summary = Summary {
        checked: outcomes.len(),
        ..Summary::default()
    };
    for outcome in outcomes {
        match outcome {
            Outcome::Unchanged => {}
            Outcome::Rotated => summary.rotated += 1,
            Outcome::Failed => summary.failed += 1,
        }
    }
    Ok(summary)
}

/// Rotates one container's log if it is full, as upstream does: find the log path, rotate
/// the files, have the runtime reopen the log, and put the file back if it cannot.
async fn check(port: &RuntimePort, container: cri::Container, policy: Policy) -> Outcome {
    let owner = Owner::of(&container);
    let status = port
        .call(cri::ContainerStatusRequest {
            container_id: container.id,
            verbose: false,
        })
        .await;
    let path = match status {
        Ok(answer) => answer.status.map(|s| s.log_path).unwrap_or_default(),
        Err(err) => return owner.failed("status", "", &err),
    };
    if path.is_empty() {
        return Outcome::Unchanged; // the container logs nowhere
    }
    let log = PathBuf::from(&path);
    let checked = blocking(move || log_rotation::rotate(&log, policy, SystemTime::now())).await;
    let rotated = match checked {
        Ok(Checked::Small) => return Outcome::Unchanged,
        Ok(Checked::Missing) => None,
        Ok(Checked::Rotated(rotated)) => Some(rotated),
        Err(err) => return owner.failed("rotate", &path, &err),
    };
    let reopened = port
        .call(cri::ReopenContainerLogRequest {
            container_id: owner.id.clone(),
        })
        .await;
    match (reopened, rotated) {
        (Ok(_), Some(_)) => {
            metrics::counter!(ROTATIONS).increment(1);
            Outcome::Rotated
        }
        (Ok(_), None) => Outcome::Unchanged,
        (Err(err), None) => owner.failed("reopen", &path, &err),
        (Err(err), Some(rotated)) => {
            let log = PathBuf::from(&path);
            match blocking(move || log_rotation::restore(&log, &rotated)).await {
                Ok(()) => owner.failed("reopen", &path, &err),
                Err(undo) => owner.failed(
                    "restore",
                    &path,
                    &format!(
                        "the runtime did not reopen it ({err}), and putting it back failed: {undo}"
                    ),
                ),
            }
        }
    }
}

/// Why a rotation's file work failed: the work itself, or the blocking task running it.
#[derive(Debug, thiserror::Error)]
enum FileWorkError {
    /// A file operation failed.
    #[error(transparent)]
    Rotate(#[from] RotateError),
    /// The blocking task doing the file work panicked or was cancelled.
    #[error("the file work did not finish: {0}")]
    Unfinished(String),
}

/// Runs file work off the actor thread.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, RotateError> + Send + 'static,
) -> Result<T, FileWorkError> {
    match tokio::task::spawn_blocking(work).await {
        Ok(done) => done.map_err(FileWorkError::from),
        Err(joined) => Err(FileWorkError::Unfinished(joined.to_string())),
    }
}
