//! The pod manager actor.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use actix::{Actor, ActorFutureExt, Addr, AsyncContext, Context, Handler, Message, WrapFuture};
use sergeant_messages::pods::core::Pod;
use sergeant_messages::pods::{LifecycleEvents, PodKey, SourceSnapshot};
use sergeant_messages::runtime::cri;
use tokio::sync::watch;

use super::admission::{admit, Capacity, Rejection};
use super::update::changed;
use crate::config_feed::ConfigState;
use crate::events::EventSink;
use crate::pod::report;
use crate::pod::worker::{PodWorker, SyncPod, TerminatePod, UpdatePod, WorkerDeps};
use crate::runtime::RuntimePort;
use crate::status_manager::{PodFinished, ReportStatus, StatusManager};
use sergeant_core::allocatable::NodeResources;
use sergeant_core::backoff::BackoffPolicy;
use sergeant_core::labels;
use sergeant_core::source::is_api_pod;
use sergeant_core::source::is_static_pod;
use sergeant_core::spec::NodeContext;
use sergeant_supervisor::failpoint;
use sergeant_supervisor::{spawn_actor, ChildEnv, ChildRef, JoinOutcome, Running};

/// Delay before a crashed pod actor is started again.
const WORKER_RESTART_DELAY: Duration = Duration::from_secs(1);

/// What the pod manager is built from.
#[derive(Clone)]
pub struct PodManagerDeps {
    /// The runtime.
    pub port: RuntimePort,
    /// The live configuration (maxPods, crash-loop periods, node settings).
    pub config: watch::Receiver<ConfigState>,
    /// Every pod source's latest snapshot.
    pub sources: Vec<watch::Receiver<SourceSnapshot>>,
    /// Where the status of API pods goes, in managed mode.
    pub status: Option<ChildRef<StatusManager>>,
    /// Where the pod actors' events go.
    pub events: EventSink,
    /// The API server, in managed mode: pod actors read config maps, secrets and tokens.
    pub api: Option<kube::Client>,
}

/// One running pod actor.
struct Worker {
    key: PodKey,
    addr: Addr<PodWorker>,
    /// Held for the actor's life: dropping it stops the pod actor (never the pod itself, which
    /// the next pod manager adopts).
    _incarnation: Running,
    pod: Option<Arc<Pod>>,
    terminating: bool,
}

/// Runs one pod actor per admitted pod.
pub struct PodManager {
    env: ChildEnv,
    deps: PodManagerDeps,
    node: Option<Arc<NodeContext>>,
    workers: BTreeMap<String, Worker>,
    reports: BTreeMap<String, Arc<Pod>>,
    rejected: BTreeMap<String, Arc<Pod>>,
    /// API pods being deleted whose pod actor finished terminating them: not started again
    /// while the API server still lists them.
    finished: BTreeMap<String, PodKey>,
    orphans_checked: bool,
}

impl PodManager {
    /// A pod manager; it reads the sources once started.
    #[must_use]
    pub fn new(env: &ChildEnv, deps: PodManagerDeps) -> Self {
        Self {
            env: env.clone(),
            deps,
            node: None,
            workers: BTreeMap::new(),
            reports: BTreeMap::new(),
            rejected: BTreeMap::new(),
            finished: BTreeMap::new(),
            orphans_checked: false,
        }
    }

    fn desired(&self) -> (BTreeMap<String, Arc<Pod>>, bool) {
        let mut desired = BTreeMap::new();
        let mut synced = true;
        for source in &self.deps.sources {
            let snapshot = source.borrow();
            synced &= snapshot.synced;
            for pod in &snapshot.pods {
                if let Some(uid) = pod.metadata.uid.clone() {
                    desired.insert(uid, Arc::clone(pod));
                }
            }
        }
        (desired, synced)
    }

    /// What admission may hand out: `maxPods`, and allocatable CPU and memory (capacity minus
    /// reservations and the hard eviction threshold).
    fn capacity(&self, node: &NodeContext) -> Capacity {
        let config = self.deps.config.borrow();
        let kubelet = &config.active.kubelet;
        let allocatable =
            NodeResources::of_machine(node.memory_capacity_bytes).allocatable(kubelet);
        Capacity {
            pods: usize::try_from(kubelet.max_pods).unwrap_or(0),
            cpu_millis: allocatable.cpu_millis,
            memory_bytes: allocatable.memory_bytes,
        }
    }

    fn reconcile(&mut self, ctx: &mut Context<Self>) {
        if let Err(fault) = failpoint::check("pod-manager::reconcile") {
            return self.env.fail(ctx, fault);
        }
        let Some(node) = self.node.clone() else {
            return;
        };
        let (desired, synced) = self.desired();
        for (uid, worker) in &mut self.workers {
            if worker.terminating {
                continue;
            }
            match desired.get(uid) {
                None => {
                    worker.terminating = true;
                    worker.addr.do_send(TerminatePod { grace: None });
                }
                Some(pod) if pod.metadata.deletion_timestamp.is_some() => {
                    tracing::info!(pod = %worker.key, "deleted in the API server, terminating gracefully");
                    worker.terminating = true;
                    worker.addr.do_send(TerminatePod {
                        grace: deletion_grace(pod),
                    });
                }
                Some(pod) => {
                    if worker
                        .pod
                        .as_ref()
                        .is_some_and(|running| changed(running, pod))
                    {
                        tracing::info!(pod = %worker.key, "changed in its source, updating its pod actor");
                        worker.pod = Some(Arc::clone(pod));
                        worker.addr.do_send(UpdatePod {
                            pod: Arc::clone(pod),
                        });
                    }
                }
            }
        }
        self.rejected.retain(|uid, _| desired.contains_key(uid));
        self.finished.retain(|uid, _| desired.contains_key(uid));
        for uid in self.rejected.keys() {
            // A rejected pod has nothing to terminate: once deleted it may go at once.
            if let Some(pod) = desired.get(uid).filter(|p| is_api_pod(p)) {
                if pod.metadata.deletion_timestamp.is_some() {
                    self.finished.insert(uid.clone(), key_of(pod));
                }
            }
        }
        if let Some(status) = &self.deps.status {
            // Repeated at every look, so a restarted status manager still deletes them.
            for key in self.finished.values() {
                let _ = status.tell(PodFinished { key: key.clone() });
            }
        }
        let capacity = self.capacity(&node);
        for (uid, pod) in &desired {
            if self.workers.contains_key(uid)
                || self.rejected.contains_key(uid)
                || self.finished.contains_key(uid)
            {
                continue;
            }
            if pod.metadata.deletion_timestamp.is_some() {
                // Deleted before it ran here (or while sergeant was down): only terminate it.
                self.start_worker(key_of(pod), Some(Arc::clone(pod)), ctx);
                continue;
            }
            let admitted: Vec<&Pod> = self
                .workers
                .values()
                .filter(|w| !w.terminating)
                .filter_map(|w| w.pod.as_deref())
                .collect();
            match admit(pod, &admitted, capacity) {
                Ok(()) => self.start_worker(key_of(pod), Some(Arc::clone(pod)), ctx),
                Err(rejection) => self.reject(uid, pod, &rejection),
            }
        }
        if synced && !self.orphans_checked {
            self.orphans_checked = true;
            self.find_orphans(desired.keys().cloned().collect(), ctx);
        }
        self.show_status();
    }

    fn reject(&mut self, uid: &str, pod: &Arc<Pod>, rejection: &Rejection) {
        tracing::warn!(pod = %key_of(pod), reason = rejection.reason, "pod rejected: {}", rejection.message);
        let rejected = Arc::new(report::rejected(pod, &rejection.reason, &rejection.message));
        self.forward(&key_of(pod), &rejected);
        self.rejected.insert(uid.to_owned(), rejected);
    }

    /// Hands the status of an API pod (or of a static pod, for its mirror pod) to the status
    /// manager. A report lost while it restarts is made good by the pod actor's next sync.
    fn forward(&self, key: &PodKey, pod: &Pod) {
        let (Some(status_manager), Some(status)) = (&self.deps.status, &pod.status) else {
            return;
        };
        if is_api_pod(pod) || is_static_pod(pod) {
            let report = ReportStatus {
                key: key.clone(),
                status: status.clone(),
            };
            if let Err(err) = status_manager.tell(report) {
                tracing::debug!(pod = %key, "status not reported: {err}");
            }
        }
    }

    fn start_worker(&mut self, key: PodKey, pod: Option<Arc<Pod>>, ctx: &mut Context<Self>) {
        let Some(node) = self.node.clone() else {
            return;
        };
        let sergeant = &self.deps.config.borrow().active;
        let restart_policy = BackoffPolicy {
            initial: sergeant
                .sergeant
                .crash_loop_back_off
                .initial_period
                .as_std(),
            max: sergeant
                .kubelet
                .crash_loop_back_off
                .max_container_restart_period
                .as_std(),
        };
        let deps = WorkerDeps {
            port: self.deps.port.clone(),
            node,
            restart_policy,
            manager: ctx.address(),
            events: self.deps.events.clone(),
            api: self.deps.api.clone(),
        };
        let deleted = pod
            .as_deref()
            .filter(|p| p.metadata.deletion_timestamp.is_some());
        let terminating = pod.is_none() || deleted.is_some();
        let mut worker = PodWorker::new(key.clone(), pod.clone(), deps);
        if let Some(deleted) = deleted {
            worker = worker.terminating(deletion_grace(deleted));
        }
        let span = tracing::info_span!("pod", namespace = %key.namespace, name = %key.name, uid = %key.uid);
        let (addr, running) = spawn_actor(worker, span);
        let uid = key.uid.clone();
        let done = running.done();
        ctx.spawn(
            done.into_actor(self)
                .map(move |outcome, act, ctx| act.worker_ended(&uid, &outcome, ctx)),
        );
        self.workers.insert(
            key.uid.clone(),
            Worker {
                key,
                addr,
                _incarnation: running,
                pod,
                terminating,
            },
        );
    }

    fn worker_ended(&mut self, uid: &str, outcome: &JoinOutcome, ctx: &mut Context<Self>) {
        let Some(worker) = self.workers.get(uid) else {
            return;
        };
        if let JoinOutcome::Panicked(message) = outcome {
            let path = format!(
                "{}/pod/{}/{}",
                self.env.path(),
                worker.key.namespace,
                worker.key.name
            );
            tracing::error!(actor = path, "pod actor panicked, restarting it: {message}");
            metrics::counter!("sergeant_actor_restarts_total", "actor" => path).increment(1);
            let (key, pod) = (worker.key.clone(), worker.pod.clone());
            let terminating = worker.terminating;
            self.workers.remove(uid);
            ctx.run_later(WORKER_RESTART_DELAY, move |act, ctx| {
                act.start_worker(key, if terminating { None } else { pod }, ctx);
                act.reconcile(ctx);
            });
        }
    }

    /// Terminates pods the runtime has but no source wants.
    fn find_orphans(&mut self, desired: BTreeSet<String>, ctx: &mut Context<Self>) {
        let port = self.deps.port.clone();
        let Some(node_name) = self.node.as_ref().map(|n| n.node_name.clone()) else {
            return;
        };
        let list = async move {
            port.call(cri::ListPodSandboxRequest {
                filter: Some(cri::PodSandboxFilter {
                    label_selector: [(labels::NODE.to_owned(), node_name)].into(),
                    ..Default::default()
                }),
            })
            .await
        };
        ctx.spawn(list.into_actor(self).map(move |listed, act, ctx| match listed {
            Ok(answer) => {
                for sandbox in answer.items {
                    let key = PodKey {
                        namespace: sandbox.labels.get(labels::POD_NAMESPACE).cloned().unwrap_or_default(),
                        name: sandbox.labels.get(labels::POD_NAME).cloned().unwrap_or_default(),
                        uid: sandbox.labels.get(labels::POD_UID).cloned().unwrap_or_default(),
                    };
                    if !key.uid.is_empty() && !desired.contains(&key.uid) && !act.workers.contains_key(&key.uid) {
                        tracing::info!(pod = %key, "terminating a pod no source wants any more");
                        act.start_worker(key, None, ctx);
                    }
                }
            }
            Err(err) => {
                tracing::warn!("cannot list sandboxes to find orphaned pods, will retry: {err}");
                act.orphans_checked = false;
            }
        }));
    }

    fn show_status(&self) {
        let terminating = self.workers.values().filter(|w| w.terminating).count();
        self.env.set_status(format!(
            "{} pod actors ({terminating} terminating), {} rejected",
            self.workers.len(),
            self.rejected.len()
        ));
        let running = self
            .reports
            .values()
            .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
            .count();
        metrics::gauge!("kubelet_running_pods").set(running as f64);
    }
}

/// The grace period of a graceful deletion: `metadata.deletionGracePeriodSeconds`, which the
/// API server set from the delete request or the pod's own grace period.
fn deletion_grace(pod: &Pod) -> Option<Duration> {
    let seconds = pod.metadata.deletion_grace_period_seconds?;
    Some(Duration::from_secs(u64::try_from(seconds).unwrap_or(0)))
}

fn key_of(pod: &Pod) -> PodKey {
    PodKey {
        namespace: pod
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into()),
        name: pod.metadata.name.clone().unwrap_or_default(),
        uid: pod.metadata.uid.clone().unwrap_or_default(),
    }
}

/// A source changed; look again.
#[derive(Debug, Clone, Copy)]
struct SourcesChanged;

impl Message for SourcesChanged {
    type Result = ();
}

impl Actor for PodManager {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        metrics::describe_gauge!(
            "kubelet_running_pods",
            "Number of pods that have a running pod sandbox."
        );
        metrics::describe_histogram!(
            "kubelet_pod_start_duration_seconds",
            "Duration from the pod actor first seeing a pod to all its containers running."
        );
        metrics::describe_counter!(
            "sergeant_pod_syncs_interrupted_total",
            "Pod syncs stopped part-way because their pod was to be terminated or stopped."
        );
        metrics::describe_histogram!(
            "sergeant_pod_start_overhead_seconds",
            "sergeant's own part of kubelet_pod_start_duration_seconds: that time less the runtime calls the pod's syncs waited on."
        );
        match sergeant_host::node::node_context(&self.deps.config.borrow().active) {
            Ok(node) => self.node = Some(Arc::new(node)),
            Err(err) => {
                return self
                    .env
                    .fail(ctx, format!("cannot read the node's settings: {err}"))
            }
        }
        for source in self.deps.sources.clone() {
            let mut source = source;
            let addr = ctx.address();
            ctx.spawn(
                async move {
                    while source.changed().await.is_ok() {
                        addr.do_send(SourcesChanged);
                    }
                }
                .into_actor(self),
            );
        }
        let mut config = self.deps.config.clone();
        let addr = ctx.address();
        ctx.spawn(
            async move {
                while config.changed().await.is_ok() {
                    addr.do_send(SourcesChanged);
                }
            }
            .into_actor(self),
        );
        self.reconcile(ctx);
    }
}

impl Handler<SourcesChanged> for PodManager {
    type Result = ();

    fn handle(&mut self, _: SourcesChanged, ctx: &mut Context<Self>) {
        self.reconcile(ctx);
    }
}

impl Handler<LifecycleEvents> for PodManager {
    type Result = ();

    fn handle(&mut self, LifecycleEvents(events): LifecycleEvents, _: &mut Context<Self>) {
        let uids: BTreeSet<&str> = events.iter().map(|e| e.pod_uid.as_str()).collect();
        for uid in uids {
            if let Some(worker) = self.workers.get(uid) {
                worker.addr.do_send(SyncPod);
            }
        }
    }
}

/// A pod actor's latest view of its pod, status included.
#[derive(Debug, Clone)]
pub struct PodReport {
    /// Which pod.
    pub key: PodKey,
    /// The pod with its computed status.
    pub pod: Arc<Pod>,
}

impl Message for PodReport {
    type Result = ();
}

impl Handler<PodReport> for PodManager {
    type Result = ();

    /// Forwards the status and keeps it for `/pods`, a terminating pod's too: its status
    /// follows its containers as they stop, until its actor reports it terminated.
    fn handle(&mut self, report: PodReport, _: &mut Context<Self>) {
        self.forward(&report.key, &report.pod);
        if self.workers.contains_key(&report.key.uid) {
            self.reports.insert(report.key.uid, report.pod);
            self.show_status();
        }
    }
}

/// A pod actor finished terminating its pod.
#[derive(Debug, Clone)]
pub struct PodTerminated {
    /// Which pod.
    pub key: PodKey,
}

impl Message for PodTerminated {
    type Result = ();
}

impl Handler<PodTerminated> for PodManager {
    type Result = ();

    fn handle(&mut self, done: PodTerminated, ctx: &mut Context<Self>) {
        if let Some(worker) = self.workers.remove(&done.key.uid) {
            if worker.pod.as_deref().is_some_and(is_api_pod) {
                self.finished.insert(done.key.uid.clone(), done.key.clone());
            }
        }
        self.reports.remove(&done.key.uid);
        self.reconcile(ctx);
    }
}

/// Every pod on the node with its status, for `/pods`.
#[derive(Debug, Clone, Copy)]
pub struct ListPods;

impl Message for ListPods {
    type Result = Vec<Arc<Pod>>;
}

impl Handler<ListPods> for PodManager {
    type Result = Vec<Arc<Pod>>;

    fn handle(&mut self, _: ListPods, _: &mut Context<Self>) -> Vec<Arc<Pod>> {
        self.reports
            .values()
            .chain(self.rejected.values())
            .cloned()
            .collect()
    }
}

/// Which pods still exist for the node, so the garbage collector never removes what a pod
/// (or a pod about to be adopted) still needs.
#[derive(Debug, Clone, Copy)]
pub struct ExistingPods;

/// The answer to [`ExistingPods`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExistingPodUids {
    /// The UIDs of pods a source wants or a pod actor still runs (terminating ones included).
    pub uids: BTreeSet<String>,
    /// Whether every source has been read and leftover pods were looked for: until then a pod
    /// missing from `uids` may just not be known yet.
    pub synced: bool,
}

impl Message for ExistingPods {
    type Result = ExistingPodUids;
}

impl Handler<ExistingPods> for PodManager {
    type Result = actix::MessageResult<ExistingPods>;

    fn handle(&mut self, _: ExistingPods, _: &mut Context<Self>) -> Self::Result {
        let (desired, synced) = self.desired();
        let uids = desired
            .into_keys()
            .chain(self.workers.keys().cloned())
            .collect();
        actix::MessageResult(ExistingPodUids {
            uids,
            synced: synced && self.orphans_checked,
        })
    }
}
