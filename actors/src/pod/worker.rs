//! The pod actor (`pods/pod-supervisor/<uid>`): owns one pod on the node and keeps the runtime in
//! line with its spec. PLEG events, back-off timers, spec changes ([`UpdatePod`]), probe
//! verdicts ([`ProbeResult`]) and a periodic resync only trigger a sync; each sync plans from
//! the whole spec and the whole runtime state, then acts. Once the actor decides to stop the
//! pod (terminate it, or stop it past its deadline) it raises its [`Interrupter`], and the sync
//! under way stops at its next check. Its status reports are made in `reporting`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use actix::{
    Actor, ActorContext, ActorFutureExt, ActorStreamExt, AsyncContext, Context,
    ContextFutureSpawner, Handler, Message, ResponseFuture, SpawnHandle, WrapFuture,
};
use futures::channel::mpsc;
use futures::FutureExt;
use sergeant_messages::pods::core::Pod;
use sergeant_messages::pods::PodKey;
use sergeant_messages::supervision::{GetTree, TreeNode};

use super::interrupt::{Interrupted, Interrupter};
use super::kill::{kill_pod, stop_failed_pod, stop_pod};
use super::look::Look;
use super::probe::{ProbeDeps, ProbeResult, ProbeSet};
use super::sync::{sync, SyncInput, SyncOutcome};
use crate::config_feed::ConfigState;
use crate::events::{reason, EventSink, EventType};
use crate::runtime::{time_in_runtime, RuntimePort};
use sergeant_core::allocation::{error_event, PendingResize};
use sergeant_core::backoff::{Backoff, BackoffPolicy};
use sergeant_core::plan::ProbeVerdicts;
use sergeant_core::restart::RestartGates;
use sergeant_core::spec::NodeContext;
use sergeant_kube_api::{ObjectCache, ObjectUser, TokenCache};
use sergeant_messages::pods::{PodReport, PodTerminated};
use sergeant_supervisor::{failpoint, ChildEnv, ChildRecipient, RestartPolicy};
use tokio::sync::watch;

#[path = "worker_report.rs"]
mod reporting;

/// Upstream's resync jitter: each pod's resync comes up to half a `syncFrequency` late, so the
/// pods of a node do not all sync at once.
const RESYNC_JITTER: f64 = 0.5;
/// Delay before retrying a termination that failed.
const KILL_RETRY: Duration = Duration::from_secs(1);
/// The status reason of a pod stopped at its `activeDeadlineSeconds`, as upstream.
const DEADLINE_REASON: &str = "DeadlineExceeded";
/// The status message that goes with it, as upstream.
const DEADLINE_MESSAGE: &str = "Pod was active on the node longer than the specified deadline";

/// The status and event reason of an evicted pod, as upstream.
const EVICTED_REASON: &str = sergeant_core::eviction::message::REASON;

/// What the pod actor shares with every sync.
#[derive(Clone)]
pub struct WorkerDeps {
    /// The runtime.
    pub port: RuntimePort,
    /// The node's settings for pods.
    pub node: Arc<NodeContext>,
    /// The live configuration: `syncFrequency` and the crash-loop periods are read from it at
    /// every sync, so a reload reaches running pods.
    pub config: watch::Receiver<ConfigState>,
    /// Where status reports go, across the pod manager's restarts.
    pub reports: ChildRecipient<PodReport>,
    /// Where the end of the pod's termination is told, across the pod manager's restarts.
    pub terminations: ChildRecipient<PodTerminated>,
    /// Where events go.
    pub events: EventSink,
    /// The API server, in managed mode (config maps, secrets, tokens).
    pub api: Option<kube::Client>,
    /// The node's config maps and secrets in use, in managed mode (see [`ObjectCache`]).
    pub objects: Option<ObjectCache>,
    /// How the pod's probe workers are restarted.
    pub supervision: RestartPolicy,
}

/// One pod's actor.
pub struct PodWorker {
    key: PodKey,
    pod: Option<Arc<Pod>>,
    deps: WorkerDeps,
    restarts: Backoff,
    pulls: Backoff,
    /// The pod's service account tokens, renewed by the syncs.
    tokens: TokenCache,
    /// The pod's use of the node's config maps and secrets: registered by its syncs, given up
    /// when the actor goes (the last pod using an object drops its watch).
    objects: Option<Arc<ObjectUser>>,
    first_seen: SystemTime,
    last_status: Option<sergeant_messages::pods::core::PodStatus>,
    /// The look behind the last report: a report never goes back to an older one, and a look
    /// while a sync runs refreshes its containers.
    reported: Option<Look>,
    /// Whether a look while a sync runs is under way.
    looking: bool,
    /// Whether `kubelet_pod_start_duration_seconds` has this pod already.
    start_recorded: bool,
    /// Time its syncs spent in runtime calls until it started, to tell sergeant's own part of
    /// the start-up time.
    runtime_time: Duration,
    terminating: Option<Option<Duration>>,
    /// The pod failed as a whole (`(reason, message)`); it is stopped and only observed.
    failure: Option<(String, String)>,
    /// Why the last sync that got to it did not carry out the pod's in-place resize.
    resize_error: Option<String>,
    /// The resize the pod asks for that the node has not allocated (the pod manager decides;
    /// `pod` carries the allocated resources), shown in its status.
    resize_pending: Option<PendingResize>,
    /// The grace period its containers get when it failed as a whole by eviction (otherwise
    /// its own).
    failure_grace: Option<Duration>,
    /// Whether the failed pod's containers have been stopped.
    stopped: bool,
    /// The probe workers of the running containers, and their verdicts.
    probes: ProbeSet,
    /// The liveness and startup verdicts the plan acts on, by container instance.
    verdicts: ProbeVerdicts,
    /// Raised once the pod is to be stopped; every sync holds its other end.
    interrupter: Interrupter,
    /// Raised by a sync resetting the pod in place; lowered once that sync's last look is
    /// reported (see [`sergeant_core::status::Knowledge::resetting`]).
    resetting: Arc<AtomicBool>,
    busy: bool,
    again: bool,
    timer: Option<SpawnHandle>,
}

impl PodWorker {
    /// The actor of `pod` at `env`'s place in the tree, or — with `pod` `None` — of a pod
    /// found only in the runtime, which it terminates.
    #[must_use]
    pub fn new(env: &ChildEnv, key: PodKey, pod: Option<Arc<Pod>>, deps: WorkerDeps) -> Self {
        let terminating = if pod.is_none() { Some(None) } else { None };
        let probes = ProbeSet::new(env, deps.supervision.clone());
        let objects = deps.objects.as_ref().map(|cache| Arc::new(cache.user()));
        Self {
            key,
            pod,
            deps,
            restarts: Backoff::default(),
            pulls: Backoff::default(),
            tokens: TokenCache::default(),
            objects,
            first_seen: SystemTime::now(),
            last_status: None,
            reported: None,
            looking: false,
            start_recorded: false,
            runtime_time: Duration::ZERO,
            terminating,
            failure: None,
            resize_error: None,
            resize_pending: None,
            failure_grace: None,
            stopped: false,
            probes,
            verdicts: ProbeVerdicts::default(),
            interrupter: Interrupter::new(),
            resetting: Arc::default(),
            busy: false,
            again: false,
            timer: None,
        }
    }

    /// The actor of a pod deleted before it ran here: it only terminates it, within `grace`.
    #[must_use]
    pub fn terminating(mut self, grace: Option<Duration>) -> Self {
        self.terminating = Some(grace);
        self
    }

    /// The actor of a pod whose resize waits for the node, for the reason `pending` says.
    #[must_use]
    pub fn resize_pending(mut self, pending: Option<PendingResize>) -> Self {
        self.resize_pending = pending;
        self
    }

    /// Stops every probe worker and forgets the verdicts (the pod is stopping).
    fn clear_probes(&mut self) {
        self.probes.clear();
        self.verdicts = ProbeVerdicts::default();
    }

    /// Starts a sync now, or right after the one running. A pod past its deadline is to be
    /// stopped: the sync under way is interrupted.
    fn trigger(&mut self, ctx: &mut Context<Self>) {
        if self.failure.is_none() && self.past_deadline() {
            tracing::info!(pod = %self.key, "active deadline exceeded, stopping the pod");
            self.failure = Some((DEADLINE_REASON.to_owned(), DEADLINE_MESSAGE.to_owned()));
            self.interrupter.raise();
        }
        if self.busy {
            self.again = true;
            self.look_meanwhile(ctx);
            return;
        }
        if let Err(fault) = failpoint::check_scoped(
            "pod::sync",
            format_args!("{}/{}", self.key.namespace, self.key.name),
        ) {
            panic!("{fault}");
        }
        self.busy = true;
        self.again = false;
        if let Some(handle) = self.timer.take() {
            ctx.cancel_future(handle);
        }
        match (self.terminating, self.pod.clone()) {
            (Some(grace), pod) => self.terminate(grace, pod, ctx),
            (None, Some(pod)) if self.failure.is_some() && !self.stopped => self.stop(pod, ctx),
            (None, Some(pod)) => self.sync(pod, ctx),
            (None, None) => self.busy = false,
        }
    }

    /// When the pod's `activeDeadlineSeconds` runs out, counted from when it was first seen
    /// (its `startTime`).
    fn deadline(&self) -> Option<SystemTime> {
        let seconds = self.pod.as_ref()?.spec.as_ref()?.active_deadline_seconds?;
        Some(self.first_seen + Duration::from_secs(u64::try_from(seconds).ok()?))
    }

    fn past_deadline(&self) -> bool {
        self.deadline().is_some_and(|at| at <= SystemTime::now())
    }

    /// Syncs when the pod's active deadline runs out. A timer of an earlier deadline that
    /// fires anyway only brings a sync forward.
    fn watch_deadline(&mut self, ctx: &mut Context<Self>) {
        if let Some(at) = self.deadline() {
            let left = at.duration_since(SystemTime::now()).unwrap_or_default();
            ctx.run_later(left, |act, ctx| act.trigger(ctx));
        }
    }

    /// Stops every container and the sandbox of a pod that failed as a whole and tears its
    /// volumes down, then syncs, which now only reports.
    fn stop(&mut self, pod: Arc<Pod>, ctx: &mut Context<Self>) {
        self.clear_probes();
        let port = self.deps.port.clone();
        let node = Arc::clone(&self.deps.node);
        let uid = self.key.uid.clone();
        let events = self.deps.events.for_pod(&pod);
        let grace = self.failure_grace;
        let work = async move { stop_failed_pod(&port, &node, &uid, &pod, grace).await };
        ctx.spawn(events.scope(work).into_actor(self).map(|result, act, ctx| {
            act.busy = false;
            match result {
                Ok(()) => act.stopped = true,
                Err(error) => tracing::warn!(pod = %act.key, "stopping failed, retrying: {error}"),
            }
            let retry = if act.stopped {
                Duration::ZERO
            } else {
                KILL_RETRY
            };
            act.timer = Some(ctx.run_later(retry, |act, ctx| act.trigger(ctx)));
        }));
    }

    /// The crash-loop back-off periods in force: the first from SergeantConfiguration, the cap
    /// from `crashLoopBackOff.maxContainerRestartPeriod`.
    fn restart_policy(&self) -> BackoffPolicy {
        let config = &self.deps.config.borrow().active;
        BackoffPolicy {
            initial: config.sergeant.crash_loop_back_off.initial_period.as_std(),
            max: config
                .kubelet
                .crash_loop_back_off
                .max_container_restart_period
                .as_std(),
        }
    }

    /// The feature gates that decide how restarts are read (`ContainerRestartRules`,
    /// `RestartAllContainersOnContainerExits`).
    pub(super) fn restart_gates(&self) -> RestartGates {
        let kubelet = &self.deps.config.borrow().active.kubelet;
        RestartGates {
            container_rules: kubelet.feature_enabled("ContainerRestartRules"),
            restart_all: kubelet.feature_enabled("RestartAllContainersOnContainerExits"),
        }
    }

    /// How long until the next sync when nothing triggers one: `syncFrequency`, plus this
    /// pod's share of upstream's jitter (fixed per pod, from its UID).
    fn resync_period(&self) -> Duration {
        let every = self
            .deps
            .config
            .borrow()
            .active
            .kubelet
            .sync_frequency
            .as_std();
        let share = self.key.uid.bytes().fold(0u32, |hash, byte| {
            hash.wrapping_mul(31).wrapping_add(u32::from(byte))
        }) % 1000;
        every.mul_f64(1.0 + RESYNC_JITTER * f64::from(share) / 1000.0)
    }

    fn sync_input(&self, pod: &Arc<Pod>, halted: bool) -> SyncInput {
        SyncInput {
            pod: Arc::clone(pod),
            port: self.deps.port.clone(),
            node: Arc::clone(&self.deps.node),
            restarts: self.restarts.clone(),
            pulls: self.pulls.clone(),
            restart_policy: self.restart_policy(),
            restart_gates: self.restart_gates(),
            probes: self.verdicts.clone(),
            halted,
            api: self.deps.api.clone(),
            objects: self.objects.clone(),
            tokens: self.tokens.clone(),
            interrupt: self.interrupter.interrupt(),
            resetting: Arc::clone(&self.resetting),
            looks: None,
        }
    }

    fn sync(&mut self, pod: Arc<Pod>, ctx: &mut Context<Self>) {
        let mut input = self.sync_input(&pod, self.failure.is_some());
        let (looks, looked) = mpsc::unbounded();
        input.looks = Some(looks);
        let looked_pod = Arc::clone(&pod);
        actix::fut::wrap_stream::<_, Self>(looked)
            .map(move |(runtime, begun), act, _| act.report_runtime(&looked_pod, runtime, begun))
            .finish()
            .spawn(ctx);
        let events = self.deps.events.for_pod(&pod);
        ctx.spawn(
            time_in_runtime(events.scope(sync(input)))
                .into_actor(self)
                .map(move |(outcome, in_runtime), act, ctx| {
                    act.runtime_time += in_runtime;
                    match outcome {
                        Ok(outcome) => act.synced(&pod, outcome, ctx),
                        Err(Interrupted) => act.interrupted(ctx),
                    }
                }),
        );
    }

    /// The sync stopped part-way because the pod is to be stopped: stop it now.
    fn interrupted(&mut self, ctx: &mut Context<Self>) {
        tracing::info!(pod = %self.key, "sync interrupted: the pod is being stopped");
        metrics::counter!("sergeant_pod_syncs_interrupted_total").increment(1);
        self.busy = false;
        self.trigger(ctx);
    }

    fn synced(&mut self, pod: &Pod, outcome: SyncOutcome, ctx: &mut Context<Self>) {
        self.busy = false;
        self.restarts = outcome.restarts.clone();
        self.pulls = outcome.pulls.clone();
        self.tokens = outcome.tokens.clone();
        match &outcome.error {
            Some(error) => {
                tracing::warn!(pod = %self.key, cause = error.cause(), "sync failed: {error}");
                metrics::counter!("sergeant_pod_sync_failures_total", "cause" => error.cause())
                    .increment(1);
            }
            // A sync that stopped early did not get to the resize: what it said before stands.
            None => {
                let news =
                    outcome.resize_error.is_some() && outcome.resize_error != self.resize_error;
                self.resize_error.clone_from(&outcome.resize_error);
                if let Some(error) = outcome.resize_error.as_deref().filter(|_| news) {
                    let message = error_event(pod, error);
                    let events = self.deps.events.for_pod(pod);
                    events.pod(EventType::Warning, reason::RESIZE_ERROR, message);
                }
            }
        }
        let events = self.deps.events.for_pod(pod);
        for (container, _) in outcome
            .waiting
            .iter()
            .filter(|(_, why)| why.reason == "CrashLoopBackOff")
        {
            events.back_off_restarting(container);
        }
        // Without a look at the runtime nothing was measured: the last report stands.
        if let Some(look) = outcome.look {
            if self.failure.is_none() {
                let report = ctx.address().recipient();
                let deps = ProbeDeps {
                    key: &self.key,
                    port: &self.deps.port,
                    report: &report,
                    events: &events,
                };
                self.probes.reconcile(pod, &look.runtime, &deps);
            }
            self.verdicts.forget_gone(&look.runtime);
            self.report(pod, look);
        }
        self.resetting.store(false, Ordering::SeqCst);
        let resync = self.resync_period();
        let next = outcome.next_sync.map_or(resync, |at| {
            at.saturating_duration_since(Instant::now()).min(resync)
        });
        let next = if outcome.error.is_some() {
            next.min(Duration::from_secs(1))
        } else {
            next
        };
        // Nothing else is due first: the timer is the periodic resync.
        let periodic = next == resync;
        self.timer = Some(ctx.run_later(next, move |act, ctx| {
            if periodic {
                metrics::counter!("sergeant_pod_resyncs_total").increment(1);
            }
            act.trigger(ctx);
        }));
        if self.again {
            self.trigger(ctx);
        }
    }

    fn terminate(
        &mut self,
        grace: Option<Duration>,
        pod: Option<Arc<Pod>>,
        ctx: &mut Context<Self>,
    ) {
        self.clear_probes();
        let port = self.deps.port.clone();
        let node = Arc::clone(&self.deps.node);
        let uid = self.key.uid.clone();
        // A pod with a spec gets a final status: its containers stopped, observed before
        // they are removed.
        let last_look = pod.clone().map(|pod| self.sync_input(&pod, true));
        let events = pod.as_deref().map(|pod| self.deps.events.for_pod(pod));
        let work = async move {
            let last = match last_look {
                Some(input) => {
                    stop_pod(&port, &uid, Some(&input.pod), grace).await?;
                    // Halted, it only looks: it has nothing to interrupt.
                    sync(input).await.ok()
                }
                None => None,
            };
            kill_pod(&port, &node, &uid, pod.as_deref(), grace)
                .await
                .map(|()| last)
        };
        let work = match events {
            Some(events) => events.scope(work).boxed_local(),
            None => work.boxed_local(),
        };
        ctx.spawn(work.into_actor(self).map(|result, act, ctx| {
            act.busy = false;
            match result {
                Ok(last) => {
                    tracing::info!(pod = %act.key, "pod terminated");
                    if let (Some(look), Some(pod)) = (last.and_then(|o| o.look), act.pod.clone()) {
                        act.report(&pod, look);
                    }
                    let done = PodTerminated {
                        key: act.key.clone(),
                    };
                    if let Err(error) = act.deps.terminations.tell(done) {
                        // A restarted pod manager asks for this actor again, which finds
                        // nothing left to terminate and says so.
                        tracing::debug!(pod = %act.key, "termination not reported: {error}");
                    }
                    ctx.stop();
                }
                Err(error) => {
                    tracing::warn!(pod = %act.key, "termination failed, retrying: {error}");
                    act.timer = Some(ctx.run_later(KILL_RETRY, |act, ctx| act.trigger(ctx)));
                }
            }
        }));
    }
}

impl Actor for PodWorker {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.watch_deadline(ctx);
        self.trigger(ctx);
    }
}

/// The pod changed in its source while it runs (an image, `activeDeadlineSeconds`, labels or
/// annotations, its allocated resources) or its resize waits for another reason: it becomes
/// the desired pod, and a sync acts on the difference — replacing containers whose definition
/// changed, stopping the pod past a new deadline, rewriting downwardAPI files, resizing
/// containers — and reports it.
#[derive(Debug, Clone)]
pub struct UpdatePod {
    /// The pod as its source now has it, with the resources the node allocated to it.
    pub pod: Arc<Pod>,
    /// The resize it asks for that is not allocated, and why.
    pub resize_pending: Option<PendingResize>,
}

impl Message for UpdatePod {
    type Result = ();
}

impl Handler<UpdatePod> for PodWorker {
    type Result = ();

    fn handle(&mut self, update: UpdatePod, ctx: &mut Context<Self>) {
        if self.terminating.is_some() {
            return;
        }
        let deadline = self.deadline();
        self.pod = Some(update.pod);
        self.resize_pending = update.resize_pending;
        if self.deadline() != deadline {
            tracing::info!(pod = %self.key, "active deadline changed");
            self.watch_deadline(ctx);
        }
        self.trigger(ctx);
    }
}

/// Sync now: something about the pod changed (a PLEG event, say).
#[derive(Debug, Clone, Copy)]
pub struct SyncPod;

impl Message for SyncPod {
    type Result = ();
}

impl Handler<SyncPod> for PodWorker {
    type Result = ();

    fn handle(&mut self, _: SyncPod, ctx: &mut Context<Self>) {
        self.trigger(ctx);
    }
}

/// Evict the pod: it fails as a whole with reason `Evicted` and `message` (upstream's), its
/// containers stopped within `grace`, and a Warning event says why.
#[derive(Debug, Clone)]
pub struct Evict {
    /// Why, in upstream's words.
    pub message: String,
    /// How long its containers get to stop.
    pub grace: Duration,
}

impl Message for Evict {
    type Result = ();
}

impl Handler<Evict> for PodWorker {
    type Result = ();

    fn handle(&mut self, evict: Evict, ctx: &mut Context<Self>) {
        if self.failure.is_some() || self.terminating.is_some() {
            return;
        }
        let Some(pod) = self.pod.clone() else {
            return;
        };
        tracing::warn!(pod = %self.key, "evicted: {}", evict.message);
        self.deps.events.for_pod(&pod).pod(
            EventType::Warning,
            EVICTED_REASON,
            evict.message.clone(),
        );
        self.failure = Some((EVICTED_REASON.to_owned(), evict.message));
        self.failure_grace = Some(evict.grace);
        self.interrupter.raise();
        self.trigger(ctx);
    }
}

/// Terminate the pod: stop its containers (within `grace`, or the pod's own grace period) and
/// remove it from the node.
#[derive(Debug, Clone, Copy)]
pub struct TerminatePod {
    /// Overrides the pod's grace period.
    pub grace: Option<Duration>,
}

impl Message for TerminatePod {
    type Result = ();
}

impl Handler<TerminatePod> for PodWorker {
    type Result = ();

    fn handle(&mut self, msg: TerminatePod, ctx: &mut Context<Self>) {
        if self.terminating.is_none() {
            tracing::info!(pod = %self.key, "terminating");
            self.terminating = Some(msg.grace);
            self.interrupter.raise();
            self.trigger(ctx);
        }
    }
}

impl Handler<ProbeResult> for PodWorker {
    type Result = ();

    /// A probe's verdict changed: a sync acts on it — its plan kills a container that failed
    /// its liveness or startup probe (and restarts it per the restart policy), and its report
    /// carries the readiness.
    fn handle(&mut self, result: ProbeResult, ctx: &mut Context<Self>) {
        if !self.probes.record(&result) {
            return;
        }
        self.verdicts
            .take(&result.container_id, result.kind, result.success);
        self.trigger(ctx);
    }
}

impl Handler<GetTree> for PodWorker {
    type Result = ResponseFuture<TreeNode>;

    /// The pod's probe workers, shown below the pod at `/debug/supervision`.
    fn handle(&mut self, _: GetTree, _: &mut Context<Self>) -> Self::Result {
        Box::pin(self.probes.tree())
    }
}
