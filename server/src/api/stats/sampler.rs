//! The slow half of the summary, read in the background: the runtime's lists and container
//! stats (containerd asks every container's shim, ~1.3 ms each), and each pod sandbox's
//! host-side numbers (network, log directory walks, filesystems). A task takes a [`Sample`]
//! every [`REFRESH_PERIOD`], as cAdvisor's housekeeping does for the upstream kubelet, so a
//! request only joins the latest one with the pod manager's pods and the node's counters.
//!
//! The task starts with the first request and stops when the routes holding its [`Sampler`]
//! are gone; a failed sample is kept as the latest (requests answer its error) until the next.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use sergeant_messages::runtime::cri;
use tokio::sync::watch;
use tracing::Instrument;

use super::clock::Clock;
use super::error::StatsError;
use super::host::{self, Host, Target};
use super::pods::RuntimeView;
use super::sandbox::{self, SandboxInfo};
use crate::ServerDeps;
use sergeant_actors::config_feed::ConfigState;
use sergeant_actors::runtime::RuntimePort;
use sergeant_core::spec::{is_safe_path_component, pod_dir_in};

/// How often the pods' numbers are read again: cAdvisor's housekeeping interval in the
/// upstream kubelet. Pod and container numbers in a summary are at most this old (plus one
/// sampling), and container CPU rates are over this interval.
pub const REFRESH_PERIOD: Duration = Duration::from_secs(10);

/// How long each sample took (the runtime's calls and the host reads).
const SAMPLE_DURATION: &str = "sergeant_stats_sample_duration_seconds";

/// Samples that failed.
const SAMPLE_ERRORS: &str = "sergeant_stats_sample_errors_total";

/// One background reading of the node's pods.
#[derive(Debug)]
pub struct Sample {
    /// What the runtime listed.
    pub view: RuntimeView,
    /// The host-side numbers, by sandbox id, and the filesystems of the writable layers and
    /// the image filesystem.
    pub host: Host,
}

/// The latest sample or why it could not be taken; `None` before the first.
type Latest = Option<Result<Arc<Sample>, Arc<StatsError>>>;

/// A route's handle on the background sampling: clones share one task.
#[derive(Clone, Default)]
pub struct Sampler {
    /// The running task's output, once started.
    latest: Arc<Mutex<Option<watch::Receiver<Latest>>>>,
}

impl Sampler {
    /// The latest sample, starting the task (and waiting for its first sample) if it is not
    /// running.
    ///
    /// # Errors
    /// The error of the latest sampling, or [`StatsError::SamplerStopped`] when the task ended.
    pub async fn latest(&self, deps: &ServerDeps) -> Result<Arc<Sample>, StatsError> {
        let mut receiver = {
            let mut slot = self.latest.lock().unwrap_or_else(PoisonError::into_inner);
            // A task that died (it has no sender any more) is replaced.
            match slot.as_ref().filter(|r| r.has_changed().is_ok()) {
                Some(receiver) => receiver.clone(),
                None => slot.insert(start(deps)).clone(),
            }
        };
        let latest = receiver
            .wait_for(Option::is_some)
            .await
            .map_err(|_| StatsError::SamplerStopped)?;
        match latest.as_ref() {
            Some(Ok(sample)) => Ok(Arc::clone(sample)),
            Some(Err(err)) => Err(StatsError::Sampling(Arc::clone(err))),
            None => Err(StatsError::SamplerStopped),
        }
    }
}

/// Starts the sampling task; it runs until every receiver is dropped.
fn start(deps: &ServerDeps) -> watch::Receiver<Latest> {
    let (sender, receiver) = watch::channel(None);
    let port = deps.port.clone();
    let config = deps.config.clone();
    metrics::describe_histogram!(
        SAMPLE_DURATION,
        metrics::Unit::Seconds,
        "How long one background sample of the pods' stats took."
    );
    metrics::describe_counter!(
        SAMPLE_ERRORS,
        "Background samples of the pods' stats that failed."
    );
    let task = async move {
        let mut infos = HashMap::new();
        loop {
            let began = Instant::now();
            let sample = take(&port, &config, &mut infos).await;
            metrics::histogram!(SAMPLE_DURATION).record(began.elapsed().as_secs_f64());
            match &sample {
                Ok(sample) => tracing::debug!(
                    sandboxes = sample.view.sandboxes.len(),
                    containers = sample.view.containers.len(),
                    took_ms = began.elapsed().as_millis(),
                    "pod stats sampled"
                ),
                Err(err) => {
                    metrics::counter!(SAMPLE_ERRORS).increment(1);
                    tracing::warn!("pod stats sample: {err}");
                }
            }
            sender.send_replace(Some(sample.map(Arc::new).map_err(Arc::new)));
            tokio::select! {
                () = sender.closed() => return,
                () = tokio::time::sleep(REFRESH_PERIOD) => {}
            }
        }
    };
    tokio::spawn(task.instrument(tracing::info_span!("stats-sampler")));
    receiver
}

/// Takes one sample. `infos` keeps what was learnt about each sandbox across samples.
async fn take(
    port: &RuntimePort,
    config: &watch::Receiver<ConfigState>,
    infos: &mut HashMap<String, SandboxInfo>,
) -> Result<Sample, StatsError> {
    let (node_name, root_dir) = {
        let state = config.borrow();
        let node_name = state
            .active
            .node_name()
            .map_err(|err| StatsError::NodeName(err.to_string()))?;
        (node_name, state.active.command_line.root_dir.clone())
    };
    let view = RuntimeView::list(port, &node_name).await?;
    refresh_infos(port, infos, &view.sandboxes).await;
    let targets = targets(&view, infos, &root_dir);
    let mountpoints = mountpoints(&view);
    let host =
        tokio::task::spawn_blocking(move || host::gather(&targets, &mountpoints, Clock::read()))
            .await?;
    Ok(Sample { view, host })
}

/// Asks about the sandboxes not seen before (concurrently) and forgets those gone.
async fn refresh_infos(
    port: &RuntimePort,
    infos: &mut HashMap<String, SandboxInfo>,
    sandboxes: &[cri::PodSandbox],
) {
    let unknown = sandboxes
        .iter()
        .filter(|s| !infos.contains_key(&s.id))
        .map(|s| sandbox::fetch(port, s.id.clone()));
    let fetched = futures::future::join_all(unknown).await;
    infos.extend(fetched.into_iter().flatten());
    infos.retain(|id, _| sandboxes.iter().any(|s| &s.id == id));
}

/// What to read on the host for each listed sandbox: its kept information, the names of its
/// running containers, and its pod's directory under the state directory `root_dir`.
fn targets(
    view: &RuntimeView,
    infos: &HashMap<String, SandboxInfo>,
    root_dir: &Path,
) -> Vec<Target> {
    view.sandboxes
        .iter()
        .map(|s| Target {
            sandbox_id: s.id.clone(),
            info: infos.get(&s.id).cloned().unwrap_or_default(),
            containers: view
                .containers
                .iter()
                .filter(|c| c.pod_sandbox_id == s.id)
                .filter_map(|c| Some(c.metadata.as_ref()?.name.clone()))
                .collect(),
            pod_dir: s
                .metadata
                .as_ref()
                .map(|m| m.uid.as_str())
                // The runtime's word is joined to a path: one plain component only.
                .filter(|uid| is_safe_path_component(uid))
                .map(|uid| pod_dir_in(root_dir, uid)),
        })
        .collect()
}

/// The mount points of the listed writable layers and image filesystems, once each.
fn mountpoints(view: &RuntimeView) -> Vec<String> {
    let layers = view
        .stats
        .iter()
        .filter_map(|s| s.writable_layer.as_ref()?.fs_id.as_ref());
    let images = view.image_fs.iter().filter_map(|fs| fs.fs_id.as_ref());
    let mut all: Vec<String> = layers
        .chain(images)
        .map(|id| id.mountpoint.clone())
        .collect();
    all.sort();
    all.dedup();
    all
}

#[cfg(test)]
mod tests {
    use super::super::pods::tests::container;
    use super::*;

    fn with_layer(id: &str, mountpoint: &str) -> cri::ContainerStats {
        cri::ContainerStats {
            attributes: Some(cri::ContainerAttributes {
                id: id.to_string(),
                ..Default::default()
            }),
            writable_layer: Some(cri::FilesystemUsage {
                fs_id: Some(cri::FilesystemIdentifier {
                    mountpoint: mountpoint.to_string(),
                }),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn each_sandbox_is_read_with_its_own_containers_and_each_filesystem_once() {
        let view = RuntimeView {
            sandboxes: ["s1", "s2"]
                .map(|id| cri::PodSandbox {
                    id: id.to_string(),
                    metadata: Some(cri::PodSandboxMetadata {
                        uid: if id == "s1" { "u-1" } else { "../x" }.to_string(),
                        ..Default::default()
                    }),
                    ..Default::default()
                })
                .into(),
            containers: vec![
                container("a", "s1", "app"),
                container("b", "s2", "web"),
                container("c", "s1", "sidecar"),
            ],
            stats: vec![with_layer("a", "/var/lib/c"), with_layer("b", "/var/lib/c")],
            image_fs: vec![cri::FilesystemUsage {
                fs_id: Some(cri::FilesystemIdentifier {
                    mountpoint: "/var/lib/a".to_string(),
                }),
                ..Default::default()
            }],
        };
        let infos = HashMap::from([(
            "s2".to_string(),
            SandboxInfo {
                pid: Some(7),
                log_directory: None,
            },
        )]);
        let targets = targets(&view, &infos, Path::new("/r"));
        assert_eq!(targets[0].sandbox_id, "s1");
        assert_eq!(targets[0].containers, ["app", "sidecar"]);
        assert_eq!(targets[0].info, SandboxInfo::default());
        assert_eq!(targets[1].containers, ["web"]);
        assert_eq!(targets[1].info.pid, Some(7));
        assert_eq!(
            targets[0].pod_dir.as_deref(),
            Some(Path::new("/r/pods/u-1"))
        );
        assert_eq!(targets[1].pod_dir, None, "a uid that is not a plain name");
        assert_eq!(mountpoints(&view), ["/var/lib/a", "/var/lib/c"]);
    }
}
