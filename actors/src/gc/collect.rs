//! One garbage collection pass, start to end: ask the pod manager which pods exist, list the
//! runtime, decide ([`super::plan`]), remove, and report what was removed. A failed removal is
//! a warning naming the object and the reason; it never stops the others.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::SystemTime;

use sergeant_messages::runtime::cri;
use sergeant_messages::runtime_error::RuntimeError;

use crate::pod_manager::{ExistingPods, PodManager};
use crate::runtime::RuntimePort;
use sergeant_core::gc::log_dirs;
use sergeant_core::gc::{plan, Existing, Policy, Removal, RuntimeObjects};
use sergeant_core::labels;
use sergeant_supervisor::{ChildRef, SendError};

/// Counter of dead containers removed.
pub const CONTAINERS_METRIC: &str = "sergeant_containers_garbage_collected_total";
/// Counter of sandboxes removed.
pub const SANDBOXES_METRIC: &str = "sergeant_sandboxes_garbage_collected_total";
/// Counter of pod log directories removed.
pub const LOG_DIRS_METRIC: &str = "sergeant_pod_log_directories_garbage_collected_total";

/// Why a pass did nothing.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    /// The pod manager did not say which pods exist, so nothing can be judged.
    #[error("cannot ask the pod manager which pods exist: {0}")]
    Pods(#[from] SendError),
    /// The runtime could not be listed.
    #[error("cannot list the runtime's objects: {0}")]
    List(#[from] RuntimeError),
}

/// What a pass works with.
#[derive(Clone)]
pub struct Pass {
    /// The runtime.
    pub port: RuntimePort,
    /// The pod manager, which knows the pods that exist.
    pub pods: ChildRef<PodManager>,
    /// This node's name: only objects labelled with it are collected.
    pub node: String,
    /// Where pod log directories are; `None` when the runtime writes no logs there.
    pub log_root: Option<PathBuf>,
    /// The limits to apply.
    pub policy: Policy,
}

/// How many objects of one kind a pass removed, and how many it could not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Removed by this pass.
    pub removed: usize,
    /// Not removed: each one logged as a warning naming the object and the reason.
    pub failed: usize,
}

impl Tally {
    /// Counts one removal's result; an object already gone counts as neither.
    fn record(&mut self, removal: &Removal, result: Result<(), RuntimeError>) {
        match result {
            Ok(()) => {
                tracing::debug!(id = %removal.id, "removed {}", removal.what);
                self.removed += 1;
            }
            Err(RuntimeError::NotFound { .. }) => {}
            Err(err) => {
                tracing::warn!(id = %removal.id, "cannot remove {}: {err}", removal.what);
                self.failed += 1;
            }
        }
    }
}

/// What a pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Dead containers.
    pub containers: Tally,
    /// Sandboxes.
    pub sandboxes: Tally,
    /// Log directories of gone pods.
    pub log_dirs: Tally,
    /// Whether the pod sources were read, so gone pods were collected too.
    pub synced: bool,
}

/// Runs one pass.
///
/// # Errors
/// [`PassError`] when the pod manager or the runtime cannot be asked; nothing was removed.
pub async fn run(pass: Pass) -> Result<Outcome, PassError> {
    let known = pass.pods.send(ExistingPods).await?;
    // Directories are listed before the runtime: a pod's sandbox exists before its log
    // directory, so any directory listed here that belongs to a live pod finds its pod's
    // objects in the lists below.
    let dirs = match (&pass.log_root, known.synced) {
        (Some(root), true) => list_dirs(root.clone()).await,
        _ => Vec::new(),
    };
    let node_only = [(labels::NODE.to_owned(), pass.node.clone())].into();
    let (containers, sandboxes) = list(&pass.port, Some(node_only)).await?;
    let runtime = RuntimeObjects {
        containers: &containers,
        sandboxes: &sandboxes,
    };
    let existing = if known.synced {
        Existing::Only(&known.uids)
    } else {
        Existing::All
    };
    let decided = plan(&pass.node, runtime, existing, &pass.policy, now_ns());
    let mut outcome = Outcome {
        synced: known.synced,
        ..Outcome::default()
    };
    for removal in &decided.containers {
        let request = cri::RemoveContainerRequest {
            container_id: removal.id.clone(),
        };
        let result = pass.port.call(request).await.map(drop);
        outcome.containers.record(removal, result);
    }
    for removal in &decided.sandboxes {
        let result = remove_sandbox(&pass.port, &removal.id).await;
        outcome.sandboxes.record(removal, result);
    }
    metrics::counter!(CONTAINERS_METRIC).increment(outcome.containers.removed as u64);
    metrics::counter!(SANDBOXES_METRIC).increment(outcome.sandboxes.removed as u64);
    if let (Some(root), false) = (pass.log_root, dirs.is_empty()) {
        outcome.log_dirs = collect_log_dirs(&pass.port, root, &dirs, runtime, &known.uids).await;
        metrics::counter!(LOG_DIRS_METRIC).increment(outcome.log_dirs.removed as u64);
    }
    Ok(outcome)
}

/// Stops (in case it still runs anything) and removes a sandbox.
async fn remove_sandbox(port: &RuntimePort, id: &str) -> Result<(), RuntimeError> {
    let stopped = port
        .call(cri::StopPodSandboxRequest {
            pod_sandbox_id: id.to_owned(),
        })
        .await;
    match stopped {
        Ok(_) | Err(RuntimeError::NotFound { .. }) => {}
        Err(err) => return Err(err),
    }
    port.call(cri::RemovePodSandboxRequest {
        pod_sandbox_id: id.to_owned(),
    })
    .await
    .map(drop)
}

/// Lists containers and sandboxes, those carrying `labels` (all when `None`).
async fn list(
    port: &RuntimePort,
    label_selector: Option<std::collections::HashMap<String, String>>,
) -> Result<(Vec<cri::Container>, Vec<cri::PodSandbox>), RuntimeError> {
    let label_selector = label_selector.unwrap_or_default();
    let containers = port
        .call(cri::ListContainersRequest {
            filter: Some(cri::ContainerFilter {
                label_selector: label_selector.clone(),
                ..Default::default()
            }),
        })
        .await?;
    let sandboxes = port
        .call(cri::ListPodSandboxRequest {
            filter: Some(cri::PodSandboxFilter {
                label_selector,
                ..Default::default()
            }),
        })
        .await?;
    Ok((containers.containers, sandboxes.items))
}

/// Removes the log directories of gone pods: first judged against this node's objects, then,
/// for the few left, against every object of the runtime (other agents may share the log
/// root).
async fn collect_log_dirs(
    port: &RuntimePort,
    root: PathBuf,
    dirs: &[String],
    ours: RuntimeObjects<'_>,
    existing: &BTreeSet<String>,
) -> Tally {
    let candidates = log_dirs::stale(dirs, ours, existing);
    if candidates.is_empty() {
        return Tally::default();
    }
    let (containers, sandboxes) = match list(port, None).await {
        Ok(all) => all,
        Err(err) => {
            tracing::warn!("cannot list the whole runtime, keeping pod log directories: {err}");
            return Tally::default();
        }
    };
    let all = RuntimeObjects {
        containers: &containers,
        sandboxes: &sandboxes,
    };
    let stale = log_dirs::stale(&candidates, all, existing);
    let removing = tokio::task::spawn_blocking(move || {
        let mut tally = Tally::default();
        for name in stale {
            let path = root.join(&name);
            match std::fs::remove_dir_all(&path) {
                Ok(()) => {
                    tracing::debug!(path = %path.display(), "removed the log directory of a gone pod");
                    tally.removed += 1;
                }
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => {
                    tracing::warn!(path = %path.display(), "cannot remove the log directory of a gone pod: {err}");
                    tally.failed += 1;
                }
            }
        }
        tally
    });
    removing.await.unwrap_or_else(|err| {
        tracing::warn!("removing pod log directories did not finish: {err}");
        Tally {
            removed: 0,
            failed: 1,
        }
    })
}

/// The directories under the log root; none (and a warning) when it cannot be read.
async fn list_dirs(root: PathBuf) -> Vec<String> {
    let shown = root.display().to_string();
    let listed = tokio::task::spawn_blocking(move || sergeant_host::log_dirs::list(&root)).await;
    match listed {
        Ok(Ok(names)) => names,
        Ok(Err(err)) => {
            tracing::warn!(path = shown, "cannot read the pod log directory: {err}");
            Vec::new()
        }
        Err(err) => {
            tracing::warn!(
                path = shown,
                "reading the pod log directory did not finish: {err}"
            );
            Vec::new()
        }
    }
}

/// Now in nanoseconds since the Unix epoch, the unit of CRI's `created_at`; a clock before
/// the epoch reads as the epoch, which makes nothing old enough to collect.
fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_nanos()).ok())
        .unwrap_or(0)
}
