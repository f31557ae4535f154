//! The `stats-provider` actor: every [`REFRESH_PERIOD`], always on (as cAdvisor's
//! housekeeping for the upstream kubelet), it reads the node's counters, the runtime's lists
//! and container stats (containerd asks every container's shim, ~1.3 ms each) and each pod
//! sandbox's host-side numbers (network, log directory walks, volumes, filesystems) and the
//! memory of the pods' cgroup (`kubepods`) — on Windows, no network namespace and no cgroup:
//! the runtime's sandbox stats give the pods' network, CPU and memory — and
//! publishes the [`Sample`] on the feed its readers hold. A failed sample is published as the
//! latest (readers see its error) until the next. The feed outlives the actor, so a restarted
//! provider's readers carry on.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::{Actor, ActorFutureExt, AsyncContext, Context, WrapFuture};
use sergeant_host::stats::pods::{self as host, Target};
use sergeant_host::stats::{node, Clock};
use sergeant_messages::runtime::cri;
use tokio::sync::watch;
use tracing::Instrument;

use super::error::SampleError;
use super::sandbox::{self, SandboxInfo};
use super::view::RuntimeView;
use super::{Latest, PodsCgroup, Sample};
use crate::config_feed::ConfigState;
use crate::runtime::RuntimePort;
use sergeant_core::spec::{is_safe_path_component, pod_dir_in, pods_cgroup, NodeOs};
use sergeant_supervisor::{failpoint, ChildEnv, ChildSpec, Slot};

/// How often the node and its pods are read again: cAdvisor's housekeeping interval in the
/// upstream kubelet, and the eviction manager's monitoring interval. Numbers in a summary are
/// at most this old (plus one sampling), and container CPU rates are over this interval.
pub const REFRESH_PERIOD: Duration = Duration::from_secs(10);

/// The failpoint evaluated before every sample.
const FAILPOINT: &str = "stats-provider::sample";

/// How long each sample took (the runtime's calls and the host reads).
const SAMPLE_DURATION: &str = "sergeant_stats_sample_duration_seconds";

/// Samples that failed.
const SAMPLE_ERRORS: &str = "sergeant_stats_sample_errors_total";

/// Samples the node and its pods and publishes each sample.
pub struct StatsProvider {
    env: ChildEnv,
    port: RuntimePort,
    config: watch::Receiver<ConfigState>,
    out: watch::Sender<Latest>,
    /// What was learnt about each sandbox, kept across samples.
    infos: HashMap<String, SandboxInfo>,
}

/// The `stats-provider` worker of the `node` supervisor: samples through `port` with the
/// settings of `config` and publishes on `out`, whose receivers are the provider's readers.
#[must_use]
pub fn child_spec(
    port: RuntimePort,
    config: watch::Receiver<ConfigState>,
    out: watch::Sender<Latest>,
) -> ChildSpec {
    ChildSpec::worker("stats-provider", &Slot::new("stats-provider"), move |env| {
        StatsProvider {
            env: env.clone(),
            port: port.clone(),
            config: config.clone(),
            out: out.clone(),
            infos: HashMap::new(),
        }
    })
}

impl StatsProvider {
    fn tick(&mut self, ctx: &mut Context<Self>) {
        if let Err(fault) = failpoint::check(FAILPOINT) {
            return self.env.fail(ctx, fault);
        }
        let began = Instant::now();
        let (port, config) = (self.port.clone(), self.config.clone());
        let mut infos = std::mem::take(&mut self.infos);
        let work = async move {
            let sample = take(&port, &config, &mut infos).await;
            (sample, infos)
        };
        ctx.spawn(
            work.instrument(tracing::info_span!("stats-sample"))
                .into_actor(self)
                .map(move |(sample, infos), act, ctx| {
                    act.infos = infos;
                    act.publish(sample, began);
                    ctx.run_later(REFRESH_PERIOD, |act, ctx| act.tick(ctx));
                }),
        );
    }

    fn publish(&mut self, sample: Result<Sample, SampleError>, began: Instant) {
        let took = began.elapsed();
        metrics::histogram!(SAMPLE_DURATION).record(took.as_secs_f64());
        match &sample {
            Ok(sample) => {
                tracing::debug!(
                    sandboxes = sample.view.sandboxes.len(),
                    containers = sample.view.containers.len(),
                    took_ms = took.as_millis(),
                    "node stats sampled"
                );
                self.env.set_status(format!(
                    "sampling every {REFRESH_PERIOD:?}; last sample: {} sandboxes, {} containers in {} ms",
                    sample.view.sandboxes.len(),
                    sample.view.containers.len(),
                    took.as_millis()
                ));
            }
            Err(err) => {
                metrics::counter!(SAMPLE_ERRORS).increment(1);
                tracing::warn!("node stats sample: {err}");
                self.env.set_status(format!(
                    "sampling every {REFRESH_PERIOD:?}; last sample failed: {err}"
                ));
            }
        }
        self.out
            .send_replace(Some(sample.map(Arc::new).map_err(Arc::new)));
    }
}

impl Actor for StatsProvider {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        metrics::describe_histogram!(
            SAMPLE_DURATION,
            metrics::Unit::Seconds,
            "How long one background sample of the node's and pods' stats took."
        );
        metrics::describe_counter!(
            SAMPLE_ERRORS,
            "Background samples of the node's and pods' stats that failed."
        );
        self.tick(ctx);
    }
}

/// Takes one sample. `infos` keeps what was learnt about each sandbox across samples.
async fn take(
    port: &RuntimePort,
    config: &watch::Receiver<ConfigState>,
    infos: &mut HashMap<String, SandboxInfo>,
) -> Result<Sample, SampleError> {
    let (node_name, root_dir, pods) = {
        let state = config.borrow();
        let node_name = state
            .active
            .node_name()
            .map_err(|err| SampleError::NodeName(err.to_string()))?;
        let kubelet = &state.active.kubelet;
        let pods = pods_cgroup(
            kubelet.cgroup_root.as_deref().unwrap_or_default(),
            kubelet.cgroups_per_qos,
        );
        (node_name, state.active.command_line.root_dir.clone(), pods)
    };
    let os = NodeOs::of_this_build();
    let view = RuntimeView::list(port, &node_name, os).await?;
    refresh_infos(port, infos, &view.sandboxes).await;
    let targets = targets(&view, infos, &root_dir, os);
    let pods = pods.filter(|_| os == NodeOs::Linux);
    let mountpoints = mountpoints(&view);
    let (node, host, pods) = tokio::task::spawn_blocking(move || {
        let node = node::sample(&root_dir)?;
        let clock = Clock::read();
        let host = host::gather(&targets, &mountpoints, clock);
        let pods = pods.map(|path| PodsCgroup {
            clock,
            memory: sergeant_host::cgroup::memory(&path)
                .inspect_err(|err| tracing::debug!("the pods' cgroup memory: {err}"))
                .ok()
                .flatten(),
            cpu: sergeant_host::cgroup::cpu(&path)
                .inspect_err(|err| tracing::debug!("the pods' cgroup CPU time: {err}"))
                .ok()
                .flatten(),
        });
        Ok::<_, SampleError>((node, host, pods))
    })
    .await??;
    Ok(Sample {
        node,
        view,
        host,
        pods,
    })
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
/// running containers, and its pod's directory under the state directory `root_dir`. On a
/// node running `os` Windows no pid is kept: there is no network namespace to read.
fn targets(
    view: &RuntimeView,
    infos: &HashMap<String, SandboxInfo>,
    root_dir: &Path,
    os: NodeOs,
) -> Vec<Target> {
    view.sandboxes
        .iter()
        .map(|s| Target {
            sandbox_id: s.id.clone(),
            info: infos
                .get(&s.id)
                .cloned()
                .map(|info| SandboxInfo {
                    pid: info.pid.filter(|_| os == NodeOs::Linux),
                    ..info
                })
                .unwrap_or_default(),
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
    use super::*;
    use sergeant_core::testing::listed_container as container;

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
            sandbox_stats: Vec::new(),
        };
        let infos = HashMap::from([(
            "s2".to_string(),
            SandboxInfo {
                pid: Some(7),
                log_directory: None,
            },
        )]);
        let targets = targets(&view, &infos, Path::new("/r"), NodeOs::Linux);
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
        let windows = super::targets(&view, &infos, Path::new("/r"), NodeOs::Windows);
        assert_eq!(windows[1].info.pid, None, "no network namespace on Windows");
    }
}
