//! Carrying out one decision to reclaim: node-level first for the disk signals of the
//! filesystem holding the images (a garbage collection pass of dead containers, then every
//! unused image, then the signal read again), then the first pod in upstream's ranking is
//! evicted and waited for until its containers have stopped and its volumes are torn down, so
//! the next decision sees what its eviction freed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use sergeant_core::eviction::decide::Reclaim;
use sergeant_core::eviction::message::{self, is_critical};
use sergeant_core::eviction::rank::{rank, StorageParts};
use sergeant_core::eviction::signals::{reclaimable_on_node, Observation, Resource, Signal};
use sergeant_core::labels;
use sergeant_core::spec::{pod_cgroup_parent, NodeContext};
use sergeant_host::stats::{fs, Clock};
use sergeant_messages::pods::core::Pod;
use sergeant_messages::runtime::cri;

use super::observe;
use crate::gc::collect::{self, Pass};
use crate::image_gc::{ImageGarbageCollector, ReclaimImages};
use crate::pod_manager::{EvictPod, ListPods, PodManager};
use crate::runtime::RuntimePort;
use crate::stats::Sample;
use sergeant_supervisor::ChildRef;

/// The counter of evicted pods, by signal (upstream's name).
pub const EVICTIONS_METRIC: &str = "kubelet_evictions";
/// How old the stats an eviction acted on were, by signal (upstream's name).
pub const STATS_AGE_METRIC: &str = "kubelet_eviction_stats_age_seconds";

/// How long an evicted pod's containers are waited for (upstream's pod cleanup timeout).
const CLEANUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How often they are looked at meanwhile.
const CLEANUP_POLL: Duration = Duration::from_secs(1);
/// The grace period of a pod evicted for a hard threshold (upstream's immediate eviction).
const HARD_GRACE: Duration = Duration::from_secs(1);

/// What a reclaim works with.
#[derive(Clone)]
pub struct Reclaimer {
    /// The runtime.
    pub port: RuntimePort,
    /// The pod manager: the pods, and where evictions go.
    pub pods: ChildRef<PodManager>,
    /// The node's settings for pods (cgroups, directories).
    pub node: Arc<NodeContext>,
    /// The garbage collection pass run for node-level reclaim.
    pub gc: Pass,
    /// The image collector, asked for every unused image after the dead containers.
    pub images: ChildRef<ImageGarbageCollector>,
    /// `evictionMaxPodGracePeriod`: the longest grace period of a pod evicted for a soft
    /// threshold.
    pub max_pod_grace: Duration,
}

/// What a reclaim did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Node-level reclaim relieved the signal; no pod was evicted.
    ReclaimedOnNode,
    /// This pod (namespace/name) was evicted; whether its containers stopped in time.
    Evicted {
        /// Which pod.
        pod: String,
        /// Whether its containers stopped within the cleanup timeout.
        cleaned_up: bool,
    },
    /// No pod could be evicted (none but critical ones, or the pod manager did not answer).
    NothingToEvict(String),
}

impl Reclaimer {
    /// Reclaims for `reclaim`, from `sample`.
    pub async fn run(&self, sample: Arc<Sample>, reclaim: Reclaim) -> Outcome {
        let signal = reclaim.threshold.signal;
        let dedicated = observe::dedicated_image_fs(&sample);
        if reclaimable_on_node(signal, dedicated) {
            match collect::run(self.gc.clone()).await {
                Ok(done) => tracing::info!(
                    signal = %signal,
                    containers = done.containers.removed,
                    sandboxes = done.sandboxes.removed,
                    "node-level reclaim"
                ),
                Err(err) => tracing::warn!(signal = %signal, "node-level reclaim: {err}"),
            }
            match self.images.send(ReclaimImages).await {
                Ok(Ok(freed)) => {
                    tracing::info!(signal = %signal, freed, "node-level reclaim: unused images")
                }
                Ok(Err(err)) => {
                    tracing::warn!(signal = %signal, "node-level reclaim of images: {err}")
                }
                Err(err) => tracing::warn!(signal = %signal, "node-level reclaim of images: {err}"),
            }
            let again = self.read_disk(&sample, signal).await;
            if again.is_some_and(|observed| !reclaim.threshold.met(&observed, true)) {
                return Outcome::ReclaimedOnNode;
            }
        }
        let pods = match self.pods.send(ListPods).await {
            Ok(pods) => pods,
            Err(err) => return Outcome::NothingToEvict(format!("the pod manager: {err}")),
        };
        let candidates: Vec<Arc<Pod>> = pods.into_iter().filter(|p| evictable(p)).collect();
        let processes = if reclaim.resource == Resource::Pids {
            self.processes(&candidates).await
        } else {
            vec![None; candidates.len()]
        };
        let parts = StorageParts::of(signal, dedicated);
        let mut usages: Vec<_> = candidates
            .iter()
            .zip(processes)
            .map(|(pod, processes)| observe::pod_usage(&sample, pod, processes, parts))
            .collect();
        rank(reclaim.resource, &mut usages);
        let Some(first) = usages.first() else {
            return Outcome::NothingToEvict("no pod to evict but critical ones".to_owned());
        };
        let Some(pod) = candidates
            .iter()
            .find(|p| p.metadata.uid.as_deref() == Some(&first.uid))
        else {
            return Outcome::NothingToEvict("the ranked pod is gone".to_owned());
        };
        self.evict(&sample, &reclaim, pod).await
    }

    async fn evict(&self, sample: &Sample, reclaim: &Reclaim, pod: &Arc<Pod>) -> Outcome {
        let name = format!(
            "{}/{}",
            pod.metadata.namespace.as_deref().unwrap_or_default(),
            pod.metadata.name.as_deref().unwrap_or_default()
        );
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let containers = observe::by_container(sample, pod, reclaim.resource);
        let observed: Observation = reclaim.observed;
        let text = message::evicted(
            reclaim.resource,
            reclaim.threshold.quantity(observed.capacity),
            observed.available,
            &containers,
        );
        let grace = self.grace(reclaim, pod);
        let signal = reclaim.threshold.signal.as_str();
        let age = Duration::from_nanos(
            u64::try_from(Clock::read().ns().saturating_sub(sample.node.clock.ns())).unwrap_or(0),
        );
        metrics::histogram!(STATS_AGE_METRIC, "eviction_signal" => signal)
            .record(age.as_secs_f64());
        tracing::warn!(pod = %name, signal, grace_s = grace.as_secs(), "evicting: {text}");
        let sent = self
            .pods
            .send(EvictPod {
                uid: uid.clone(),
                message: text,
                grace,
            })
            .await;
        match sent {
            Ok(true) => {}
            Ok(false) => return Outcome::NothingToEvict(format!("{name} has no pod actor")),
            Err(err) => return Outcome::NothingToEvict(format!("the pod manager: {err}")),
        }
        metrics::counter!(EVICTIONS_METRIC, "eviction_signal" => signal).increment(1);
        let cleaned_up = self.wait_for_cleanup(&uid).await;
        Outcome::Evicted {
            pod: name,
            cleaned_up,
        }
    }

    /// The grace period of an evicted pod: immediate for a hard threshold; for a soft one
    /// its own, capped at `evictionMaxPodGracePeriod`.
    fn grace(&self, reclaim: &Reclaim, pod: &Pod) -> Duration {
        if reclaim.threshold.is_hard() {
            return HARD_GRACE;
        }
        let own = pod
            .spec
            .as_ref()
            .and_then(|s| s.termination_grace_period_seconds)
            .and_then(|s| u64::try_from(s).ok())
            .map_or(Duration::from_secs(30), Duration::from_secs);
        own.min(self.max_pod_grace)
    }

    /// The disk signal `signal` read again after node-level reclaim.
    async fn read_disk(&self, sample: &Sample, signal: Signal) -> Option<Observation> {
        let path = match signal {
            Signal::NodeFsAvailable | Signal::NodeFsInodesFree => self.node.root_dir.clone(),
            _ => observe::image_fs_mountpoint(sample)?.into(),
        };
        let stats = tokio::task::spawn_blocking(move || fs::filesystem(&path, Clock::read()))
            .await
            .ok()?
            .ok()?;
        let inodes = matches!(
            signal,
            Signal::NodeFsInodesFree | Signal::ImageFsInodesFree | Signal::ContainerFsInodesFree
        );
        Some(if inodes {
            Observation {
                available: stats.inodes_free?,
                capacity: stats.inodes?,
            }
        } else {
            Observation {
                available: stats.available_bytes?,
                capacity: stats.capacity_bytes?,
            }
        })
    }

    /// The process count of each pod's cgroup.
    async fn processes(&self, pods: &[Arc<Pod>]) -> Vec<Option<u64>> {
        let paths: Vec<String> = pods
            .iter()
            .map(|p| pod_cgroup_parent(p, &self.node))
            .collect();
        tokio::task::spawn_blocking(move || {
            paths
                .iter()
                .map(|path| sergeant_host::cgroup::pod_processes(path))
                .collect()
        })
        .await
        .unwrap_or_else(|_| vec![None; pods.len()])
    }

    /// Waits until pod `uid` has no running container and its volumes are torn down (upstream
    /// waits for the evicted pod's resources to be reclaimed), up to [`CLEANUP_TIMEOUT`].
    async fn wait_for_cleanup(&self, uid: &str) -> bool {
        let deadline = Instant::now() + CLEANUP_TIMEOUT;
        loop {
            if self.stopped(uid).await && !self.volumes_left(uid).await {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(CLEANUP_POLL).await;
        }
    }

    /// Whether pod `uid`'s volumes are still on the node (a failed look counts as yes).
    async fn volumes_left(&self, uid: &str) -> bool {
        let (node, uid) = (Arc::clone(&self.node), uid.to_owned());
        tokio::task::spawn_blocking(move || sergeant_host::volumes::pod_volumes_exist(&uid, &node))
            .await
            .unwrap_or(true)
    }

    /// Whether the runtime shows no running container of pod `uid` (a failed look counts as
    /// no).
    async fn stopped(&self, uid: &str) -> bool {
        let request = cri::ListContainersRequest {
            filter: Some(cri::ContainerFilter {
                state: Some(cri::ContainerStateValue {
                    state: cri::ContainerState::ContainerRunning.into(),
                }),
                label_selector: [(labels::POD_UID.to_owned(), uid.to_owned())].into(),
                ..cri::ContainerFilter::default()
            }),
        };
        self.port
            .call(request)
            .await
            .is_ok_and(|listed| listed.containers.is_empty())
    }
}

/// Whether a pod may be evicted: not critical, not finished, not being deleted.
fn evictable(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    !is_critical(pod)
        && !matches!(phase, Some("Succeeded" | "Failed"))
        && pod.metadata.deletion_timestamp.is_none()
}
