//! The pod manager actor.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use actix::{Actor, ActorFutureExt, AsyncContext, Context, Handler, Message, WrapFuture};
use sergeant_messages::pods::core::Pod;
use sergeant_messages::pods::{PodKey, PodReport, PodTerminated, SourceSnapshot};
use sergeant_messages::runtime::cri;
use sergeant_messages::supervision::ChildGaveUp;
use tokio::sync::watch;

use super::children::{PodAssignment, PodAssignments};
use super::gave_up::given_up;
use super::resizes::{self, observe_deferred, Resolution, RetryTrigger};
use super::runtime_features::follow_runtime_features;
use crate::config_feed::ConfigState;
use crate::events::{reason, EventSink, EventType};
use crate::pod::report;
use crate::pod::worker::{Evict, PodWorker, SyncPod, TerminatePod, UpdatePod, WorkerDeps};
use crate::pressure_feed::PressureFeed;
use crate::runtime::RuntimePort;
use crate::status_manager::{PodFinished, ReportStatus, StatusManager};
use sergeant_core::admission::{
    admit, admit_groups_policy, admit_to_node, wants_strict_groups, Capacity, Rejection,
};
use sergeant_core::allocatable::NodeResources;
use sergeant_core::allocation::{resize_requested, with_allocation, Allocations};
use sergeant_core::eviction;
use sergeant_core::kind::ephemeral_containers;
use sergeant_core::labels;
use sergeant_core::node_status::facts::RuntimeHealth;
use sergeant_core::pleg::diff::LifecycleEvent;
use sergeant_core::pod_update::changed;
use sergeant_core::source::is_api_pod;
use sergeant_core::source::is_static_pod;
use sergeant_core::spec::{self, NodeContext};
use sergeant_core::sysctls::Allowlist;
use sergeant_kube_api::ObjectCache;
use sergeant_supervisor::failpoint;
use sergeant_supervisor::{ChildEnv, ChildRef, DynamicSupervisor, RestartPolicy, Slot, StartChild};

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
    /// The node's config maps and secrets in use, in managed mode: each pod actor registers
    /// its pod's and reads them through it.
    pub objects: Option<ObjectCache>,
    /// Where the pod supervisor is published: asked to start the pod actors, and watched for
    /// its restarts.
    pub pod_supervisor: Slot<DynamicSupervisor<PodWorker>>,
    /// What each pod actor is to do, read by the pod supervisor at every (re)start of one.
    pub assignments: PodAssignments,
    /// How pod actors reach the pod manager, across its restarts.
    pub manager: ChildRef<PodManager>,
    /// How a pod actor's probe workers are restarted, and how long a message to a restarting
    /// pod actor waits.
    pub supervision: RestartPolicy,
    /// The node's pressure conditions, which refuse pods at admission.
    pub pressure: PressureFeed,
    /// The runtime's health polls: whether it applies `supplementalGroupsPolicy: Strict`.
    pub runtime: watch::Receiver<RuntimeHealth>,
}

/// Runs one pod actor per admitted pod, as a child of the pod supervisor.
pub struct PodManager {
    env: ChildEnv,
    pub(super) deps: PodManagerDeps,
    pod_supervisor: ChildRef<DynamicSupervisor<PodWorker>>,
    pub(super) node: Option<Arc<NodeContext>>,
    /// Whether the runtime applies `supplementalGroupsPolicy: Strict`, as of its last answer;
    /// `None` until it answered once, and `Strict` pods wait until then.
    pub(super) strict_groups: Option<bool>,
    /// The size of the filesystem of the node's root directory, measured at start; `None`
    /// when it could not be, and then admission does not check ephemeral storage.
    storage_bytes: Option<u64>,
    /// How each pod actor is reached, by pod UID; what each is to do is in the assignments.
    pub(super) workers: BTreeMap<String, ChildRef<PodWorker>>,
    /// What brings the next look, when it is not a source: the waiting resizes are tried
    /// then (see `resizes`).
    pub(super) retry: Option<RetryTrigger>,
    /// The `(reason, priority_bucket)` series of `kubelet_pod_pending_resizes` last set above
    /// 0: each goes to 0 once no resize of its kind waits.
    pub(super) pending_series: BTreeSet<(&'static str, &'static str)>,
    /// The allocations the checkpoint held when this pod manager started: a pod found there
    /// is admitted at its allocation (see `checkpoint`).
    pub(super) loaded: Allocations,
    /// The allocations last written to the checkpoint.
    pub(super) saved: Option<Allocations>,
    reports: BTreeMap<String, Arc<Pod>>,
    /// Pods whose actor was given up and not back yet: reported with the reason.
    given_up: BTreeSet<String>,
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
            pod_supervisor: deps
                .pod_supervisor
                .reference(deps.supervision.delivery_timeout),
            deps,
            node: None,
            strict_groups: None,
            storage_bytes: None,
            workers: BTreeMap::new(),
            reports: BTreeMap::new(),
            given_up: BTreeSet::new(),
            rejected: BTreeMap::new(),
            finished: BTreeMap::new(),
            orphans_checked: false,
            retry: None,
            pending_series: BTreeSet::new(),
            loaded: Allocations::default(),
            saved: None,
        }
    }

    /// The pods the sources want here, as this node's feature gates let it see them (with
    /// PodLevelResources off, without their pod-level resources), and whether every source
    /// has synced.
    fn desired(&self) -> (BTreeMap<String, Arc<Pod>>, bool) {
        let pod_level = self
            .deps
            .config
            .borrow()
            .active
            .kubelet
            .feature_enabled("PodLevelResources");
        let mut desired = BTreeMap::new();
        let mut synced = true;
        for source in &self.deps.sources {
            let snapshot = source.borrow();
            synced &= snapshot.synced;
            for pod in &snapshot.pods {
                if let Some(uid) = pod.metadata.uid.clone() {
                    let seen = if pod_level {
                        Arc::clone(pod)
                    } else {
                        spec::without_pod_level(pod)
                    };
                    desired.insert(uid, seen);
                }
            }
        }
        (desired, synced)
    }

    /// What admission may hand out: `maxPods`, and allocatable CPU, memory and ephemeral
    /// storage (capacity minus reservations and the hard eviction thresholds).
    pub(super) fn capacity(&self, node: &NodeContext) -> Capacity {
        let config = self.deps.config.borrow();
        let kubelet = &config.active.kubelet;
        let machine = NodeResources::of_machine(node.cpus, node.memory_capacity_bytes)
            .with_ephemeral_storage(self.storage_bytes.unwrap_or(0));
        let allocatable = machine.allocatable(kubelet);
        Capacity {
            pods: usize::try_from(kubelet.max_pods).unwrap_or(0),
            cpu_millis: allocatable.cpu_millis,
            memory_bytes: allocatable.memory_bytes,
            ephemeral_storage_bytes: self
                .storage_bytes
                .map(|_| allocatable.ephemeral_storage_bytes),
        }
    }

    /// The pods admitted to the node that hold a share of it — not being terminated, not
    /// finished — but `except`, each at its allocated resources.
    pub(super) fn admitted(&self, except: Option<&str>) -> Vec<Arc<Pod>> {
        let assigned = self.deps.assignments.borrow();
        assigned
            .iter()
            .filter(|(uid, a)| {
                a.terminating.is_none() && !self.has_finished(uid) && except != Some(uid.as_str())
            })
            .filter_map(|(_, a)| a.pod.clone())
            .collect()
    }

    /// Whether the pod actor of `uid` last reported its pod Succeeded or Failed: such a pod
    /// holds no share of the node any more.
    pub(super) fn has_finished(&self, uid: &str) -> bool {
        self.reports
            .get(uid)
            .and_then(|pod| pod.status.as_ref()?.phase.as_deref())
            .is_some_and(|phase| phase == "Succeeded" || phase == "Failed")
    }

    pub(super) fn reconcile(&mut self, ctx: &mut Context<Self>) {
        if let Err(fault) = failpoint::check("pod-manager::reconcile") {
            return self.env.fail(ctx, fault);
        }
        let Some(node) = self.node.clone() else {
            return;
        };
        let (desired, synced) = self.desired();
        let workers = &self.workers;
        let finished = |uid: &str| self.has_finished(uid);
        let mut removed = false;
        // A message lost while a pod actor restarts is not missed: its next incarnation reads
        // the assignment changed here.
        self.deps.assignments.send_if_modified(|assigned| {
            let mut modified = false;
            for (uid, assignment) in assigned.iter_mut() {
                if assignment.terminating.is_some() {
                    continue;
                }
                let key = &assignment.key;
                if desired.get(uid).is_none_or(|p| p.metadata.deletion_timestamp.is_some()) {
                    // A resize of a pod being terminated no longer waits.
                    if let Some(pod) = &assignment.pod {
                        let pending = assignment.resize_pending.take();
                        observe_deferred(pending.as_ref(), pod, Resolution::Terminated);
                    }
                }
                let sent = match desired.get(uid) {
                    None => {
                        removed = true;
                        assignment.terminating = Some(None);
                        workers.get(uid).map(|w| w.tell(TerminatePod { grace: None }))
                    }
                    Some(pod) if pod.metadata.deletion_timestamp.is_some() => {
                        tracing::info!(pod = %key, "deleted in the API server, terminating gracefully");
                        removed = true;
                        let grace = deletion_grace(pod);
                        assignment.terminating = Some(grace);
                        workers.get(uid).map(|w| w.tell(TerminatePod { grace }))
                    }
                    Some(pod) => {
                        let Some(running) = assignment.pod.clone() else {
                            continue;
                        };
                        // A resize not allocated yet leaves the allocated resources in place.
                        let resizing = resize_requested(&running, pod);
                        if resizing && assignment.resize_pending.is_none() && !finished(uid) {
                            // Not decided yet: `allocate_resizes`, below, decides it and tells
                            // the actor what to run and whether it waits. Told now, the actor
                            // would report the new generation observed with the old
                            // allocation and no PodResizePending: a resize seen as done.
                            continue;
                        }
                        let pod = if resizing {
                            Arc::new(with_allocation(pod, &running))
                        } else {
                            Arc::clone(pod)
                        };
                        // Asked back to what it has before it was allocated: nothing waits.
                        let dropped = if resizing {
                            None
                        } else {
                            assignment.resize_pending.take()
                        };
                        observe_deferred(dropped.as_ref(), &pod, Resolution::Reverted);
                        let reverted = dropped.is_some();
                        if !reverted && !changed(&running, &pod) {
                            continue;
                        }
                        tracing::info!(pod = %key, "changed in its source, updating its pod actor");
                        assignment.pod = Some(Arc::clone(&pod));
                        let resize_pending = assignment.resize_pending.clone();
                        workers.get(uid).map(|w| w.tell(UpdatePod { pod, resize_pending }))
                    }
                };
                if let Some(Err(error)) = sent {
                    tracing::debug!(pod = %key, "told at its next start instead: {error}");
                }
                modified = true;
            }
            modified
        });
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
        // Resizes of the pods running here are tried before new pods take what is free.
        let trigger = self.retry.take().unwrap_or(if removed {
            RetryTrigger::PodsRemoved
        } else {
            RetryTrigger::PodUpdated
        });
        self.allocate_resizes(&desired, trigger);
        let capacity = self.capacity(&node);
        let allowlist = Allowlist::of(&self.deps.config.borrow().active.kubelet);
        let mut added_waiting = false;
        for (uid, pod) in &desired {
            if self.workers.contains_key(uid)
                || self.rejected.contains_key(uid)
                || self.finished.contains_key(uid)
            {
                continue;
            }
            if pod.metadata.deletion_timestamp.is_some() {
                // Deleted before it ran here (or while sergeant was down): only terminate it.
                let grace = deletion_grace(pod);
                self.start_worker(key_of(pod), Some(Arc::clone(pod)), Some(grace));
                continue;
            }
            // A pod this node ran before is admitted at what it was allocated then.
            let pod = &self.at_allocation(uid, pod);
            added_waiting |= resize_requested(pod, &desired[uid]);
            let strict_groups = match self.strict_groups {
                Some(applied) => applied,
                // Decided once the runtime has said whether it applies the policy.
                None if wants_strict_groups(pod) => continue,
                None => false,
            };
            let admission = {
                let admitted = self.admitted(None);
                let admitted: Vec<&Pod> = admitted.iter().map(AsRef::as_ref).collect();
                let pressure = self.deps.pressure.borrow().clone();
                eviction::message::admit(pod, &pressure)
                    .and_then(|()| admit_to_node(pod, &node, &allowlist))
                    .and_then(|()| admit_groups_policy(pod, strict_groups))
                    .and_then(|()| admit(pod, &admitted, capacity))
            };
            match admission {
                Ok(()) => self.start_worker(key_of(pod), Some(Arc::clone(pod)), None),
                Err(rejection) => self.reject(uid, pod, &rejection),
            }
        }
        if added_waiting {
            self.allocate_resizes(&desired, RetryTrigger::PodsAdded);
        }
        self.save_allocations(synced);
        if synced && !self.orphans_checked {
            self.orphans_checked = true;
            self.find_orphans(desired.keys().cloned().collect(), ctx);
        }
        self.show_status();
    }

    fn reject(&mut self, uid: &str, pod: &Arc<Pod>, rejection: &Rejection) {
        tracing::warn!(pod = %key_of(pod), reason = rejection.reason, "pod rejected: {}", rejection.message);
        metrics::counter!(
            "kubelet_admission_rejections_total",
            "reason" => rejection.metric_reason().to_owned()
        )
        .increment(1);
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

    /// Assigns the pod actor of `key` its pod (`None`: a pod only the runtime has) and whether
    /// it terminates it, and asks the pod supervisor for it.
    fn start_worker(
        &mut self,
        key: PodKey,
        pod: Option<Arc<Pod>>,
        terminating: Option<Option<Duration>>,
    ) {
        let Some(node) = self.node.clone() else {
            return;
        };
        let deps = WorkerDeps {
            port: self.deps.port.clone(),
            node,
            config: self.deps.config.clone(),
            reports: self.deps.manager.recipient(),
            terminations: self.deps.manager.recipient(),
            events: self.deps.events.clone(),
            api: self.deps.api.clone(),
            objects: self.deps.objects.clone(),
            supervision: self.deps.supervision.clone(),
        };
        let uid = key.uid.clone();
        let assignment = PodAssignment {
            key,
            pod,
            resize_pending: None,
            terminating,
            deps,
        };
        self.deps.assignments.send_modify(|assigned| {
            assigned.insert(uid.clone(), assignment);
        });
        self.ask_for(&uid);
    }

    /// Asks the pod supervisor for the pod actor of `uid` — it starts one from the assignment
    /// unless one runs — and keeps a reference to it.
    fn ask_for(&mut self, uid: &str) -> ChildRef<PodWorker> {
        let slot = Slot::new(uid);
        let actor = slot.reference(self.deps.supervision.delivery_timeout);
        let start = StartChild {
            name: uid.to_owned(),
            slot,
        };
        if let Err(error) = self.pod_supervisor.tell(start) {
            // Asked again once the pod supervisor is back.
            tracing::warn!(
                uid,
                "the pod supervisor is not up to start a pod actor: {error}"
            );
        }
        self.workers.insert(uid.to_owned(), actor.clone());
        actor
    }

    /// Asks the pod supervisor again for every pod actor whenever it was restarted: they died
    /// with it. `supervisor` is handed on from one wait to the next, so no restart is missed.
    fn watch_pod_supervisor(
        &self,
        mut supervisor: ChildRef<DynamicSupervisor<PodWorker>>,
        ctx: &mut Context<Self>,
    ) {
        let restarted = async move {
            let restarted = supervisor.restarted().await;
            (supervisor, restarted)
        };
        ctx.spawn(
            restarted
                .into_actor(self)
                .map(|(supervisor, restarted), act, ctx| {
                    if restarted.is_err() {
                        return;
                    }
                    let uids: Vec<String> = act.workers.keys().cloned().collect();
                    tracing::warn!(
                        "the pod supervisor restarted; asking it again for {} pod actors",
                        uids.len()
                    );
                    for uid in uids {
                        act.ask_for(&uid);
                    }
                    act.watch_pod_supervisor(supervisor, ctx);
                }),
        );
    }

    /// Takes over the pod actors a previous pod manager had asked for: they kept running (or
    /// are started again), and each reports its pod again at once.
    fn adopt(&mut self, ctx: &mut Context<Self>) {
        let uids: Vec<String> = self.deps.assignments.borrow().keys().cloned().collect();
        if !uids.is_empty() {
            tracing::info!("taking over {} pod actors", uids.len());
        }
        for uid in uids {
            let actor = self.ask_for(&uid);
            ctx.spawn(
                async move {
                    if let Err(error) = actor.send(SyncPod).await {
                        tracing::debug!(uid, "an adopted pod actor did not sync: {error}");
                    }
                }
                .into_actor(self),
            );
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
        ctx.spawn(list.into_actor(self).map(move |listed, act, _| match listed {
            Ok(answer) => {
                for sandbox in answer.items {
                    let key = PodKey {
                        namespace: sandbox.labels.get(labels::POD_NAMESPACE).cloned().unwrap_or_default(),
                        name: sandbox.labels.get(labels::POD_NAME).cloned().unwrap_or_default(),
                        uid: sandbox.labels.get(labels::POD_UID).cloned().unwrap_or_default(),
                    };
                    if !key.uid.is_empty() && !desired.contains(&key.uid) && !act.workers.contains_key(&key.uid) {
                        tracing::info!(pod = %key, "terminating a pod no source wants any more");
                        act.start_worker(key, None, Some(None));
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
        let (terminating, ephemeral) = {
            let assigned = self.deps.assignments.borrow();
            let terminating = assigned
                .values()
                .filter(|a| a.terminating.is_some())
                .count();
            let pods = assigned.values().filter_map(|a| a.pod.as_deref());
            let ephemeral: usize = pods.map(|p| ephemeral_containers(p).count()).sum();
            (terminating, ephemeral)
        };
        metrics::gauge!("kubelet_managed_ephemeral_containers").set(ephemeral as f64);
        self.env.set_status(format!(
            "{} pod actors ({terminating} terminating, {} given up), {} rejected",
            self.workers.len(),
            self.given_up.len(),
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
        metrics::describe_gauge!(
            "kubelet_managed_ephemeral_containers",
            "Current number of ephemeral containers in pods managed by this kubelet."
        );
        metrics::describe_histogram!(
            "kubelet_pod_start_duration_seconds",
            "Duration from the pod actor first seeing a pod to all its containers running."
        );
        metrics::describe_counter!(
            "kubelet_admission_rejections_total",
            "Cumulative number pod admission rejections by the Kubelet."
        );
        resizes::describe_metrics();
        metrics::describe_counter!(
            "sergeant_pod_syncs_interrupted_total",
            "Pod syncs stopped part-way because their pod was to be terminated or stopped."
        );
        metrics::describe_counter!(
            "sergeant_pod_resyncs_total",
            "Pod syncs started by the periodic resync (syncFrequency), not by an event."
        );
        metrics::describe_histogram!(
            "sergeant_pod_start_overhead_seconds",
            "sergeant's own part of kubelet_pod_start_duration_seconds: that time less the runtime calls the pod's syncs waited on."
        );
        match sergeant_host::node::node_context(&self.deps.config.borrow().active) {
            Ok(node) => {
                self.storage_bytes = sergeant_host::filesystem::space(&node.root_dir)
                    .inspect_err(|err| {
                        tracing::warn!(
                            "{}: size not measured, ephemeral-storage requests not checked at admission: {err}",
                            node.root_dir.display()
                        );
                    })
                    .ok()
                    .map(|space| space.total_bytes);
                self.node = Some(Arc::new(node));
            }
            Err(err) => {
                return self
                    .env
                    .fail(ctx, format!("cannot read the node's settings: {err}"))
            }
        }
        self.load_allocations();
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
        ctx.spawn(
            follow_runtime_features(self.deps.runtime.clone(), ctx.address()).into_actor(self),
        );
        // Made now, it takes the pod supervisor up now as seen.
        let supervisor = self
            .deps
            .pod_supervisor
            .reference(self.deps.supervision.delivery_timeout);
        self.watch_pod_supervisor(supervisor, ctx);
        Self::retry_periodically(ctx);
        self.adopt(ctx);
        self.reconcile(ctx);
    }
}

impl Handler<SourcesChanged> for PodManager {
    type Result = ();

    fn handle(&mut self, _: SourcesChanged, ctx: &mut Context<Self>) {
        self.reconcile(ctx);
    }
}

/// A batch of lifecycle events from one relist of the PLEG: their pods' actors sync.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LifecycleEvents(pub Vec<LifecycleEvent>);

impl Message for LifecycleEvents {
    type Result = ();
}

impl Handler<LifecycleEvents> for PodManager {
    type Result = ();

    fn handle(&mut self, LifecycleEvents(events): LifecycleEvents, _: &mut Context<Self>) {
        let uids: BTreeSet<&str> = events.iter().map(|e| e.pod_uid.as_str()).collect();
        for uid in uids {
            if let Some(worker) = self.workers.get(uid) {
                // A restarting pod actor syncs when it starts anyway.
                let _ = worker.tell(SyncPod);
            }
        }
    }
}

impl Handler<PodReport> for PodManager {
    type Result = ();

    /// Forwards the status and keeps it for `/pods`, a terminating pod's too: its status
    /// follows its containers as they stop, until its actor reports it terminated.
    /// A pod that just finished gives its share back: the waiting resizes are tried again.
    fn handle(&mut self, report: PodReport, ctx: &mut Context<Self>) {
        self.forward(&report.key, &report.pod);
        if self.workers.contains_key(&report.key.uid) {
            let uid = report.key.uid;
            let finished_before = self.has_finished(&uid);
            self.given_up.remove(&uid);
            self.reports.insert(uid.clone(), report.pod);
            self.show_status();
            if !finished_before && self.has_finished(&uid) {
                self.forget_resize(&uid);
                if self.resizes_wait() {
                    self.retry = Some(RetryTrigger::PodTerminated);
                    self.reconcile(ctx);
                }
            }
        }
    }
}

impl Handler<PodTerminated> for PodManager {
    type Result = ();

    fn handle(&mut self, done: PodTerminated, ctx: &mut Context<Self>) {
        let uid = &done.key.uid;
        self.workers.remove(uid);
        let mut assignment = None;
        self.deps.assignments.send_if_modified(|assigned| {
            assignment = assigned.remove(uid);
            assignment.is_some()
        });
        if assignment
            .and_then(|a| a.pod)
            .is_some_and(|pod| is_api_pod(&pod))
        {
            self.finished.insert(uid.clone(), done.key.clone());
        }
        self.reports.remove(uid);
        self.given_up.remove(uid);
        self.retry = Some(RetryTrigger::PodsRemoved);
        self.reconcile(ctx);
    }
}

/// Evict a pod: the eviction manager chose it to relieve the node. Answers whether the pod
/// has an actor to tell.
#[derive(Debug, Clone)]
pub struct EvictPod {
    /// Which pod.
    pub uid: String,
    /// Why, in upstream's words; the pod's status message and its event's.
    pub message: String,
    /// How long its containers get to stop.
    pub grace: Duration,
}

impl Message for EvictPod {
    type Result = bool;
}

impl Handler<EvictPod> for PodManager {
    type Result = bool;

    fn handle(&mut self, evict: EvictPod, _: &mut Context<Self>) -> bool {
        let Some(worker) = self.workers.get(&evict.uid) else {
            return false;
        };
        let told = worker.tell(Evict {
            message: evict.message,
            grace: evict.grace,
        });
        if let Err(error) = &told {
            tracing::warn!(uid = evict.uid, "eviction not delivered: {error}");
        }
        told.is_ok()
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

impl Handler<ChildGaveUp> for PodManager {
    type Result = ();

    /// A pod actor failed more often than its restart intensity allows: the pod is reported
    /// with the reason (its status and a `FailedSync` event) until the pod supervisor's next
    /// try brings the actor back and it reports again. The other pods carry on.
    fn handle(&mut self, gave_up: ChildGaveUp, _: &mut Context<Self>) {
        let uid = &gave_up.name;
        let Some(assignment) = self.deps.assignments.borrow().get(uid).cloned() else {
            return;
        };
        let message = format!(
            "its pod actor failed too often ({}); trying again in {:?}",
            gave_up.reason, gave_up.retry_after
        );
        tracing::error!(pod = %assignment.key, "{message}");
        let Some(last) = self.reports.get(uid).cloned().or(assignment.pod) else {
            // A pod only the runtime has: nothing to report it on.
            return;
        };
        self.deps.events.for_pod(&last).pod(
            EventType::Warning,
            reason::FAILED_SYNC,
            message.clone(),
        );
        let reported = Arc::new(given_up(&last, &message));
        self.forward(&assignment.key, &reported);
        self.reports.insert(uid.clone(), reported);
        self.given_up.insert(uid.clone());
        self.show_status();
    }
}
