//! The pod actor (`pod/<namespace>/<name>`): owns one pod on the node and keeps the runtime in
//! line with its spec. PLEG events, back-off timers, spec changes and a periodic resync only
//! trigger a sync; each sync compares the whole spec with the whole runtime state.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use actix::{
    Actor, ActorContext, ActorFutureExt, Addr, AsyncContext, Context, Handler, Message,
    SpawnHandle, WrapFuture,
};
use sergeant_messages::pods::core::Pod;
use sergeant_messages::pods::PodKey;

use super::backoff::{Backoff, BackoffPolicy};
use super::kill::kill_pod;
use super::report;
use super::spec::NodeContext;
use super::sync::{sync, SyncInput, SyncOutcome};
use crate::failpoint;
use crate::pod_manager::{PodManager, PodReport, PodTerminated};
use crate::runtime::RuntimePort;

/// A sync happens at least this often even when nothing triggers one.
const RESYNC_PERIOD: Duration = Duration::from_secs(10);
/// Delay before retrying a termination that failed.
const KILL_RETRY: Duration = Duration::from_secs(1);

/// What the pod actor shares with every sync.
#[derive(Clone)]
pub struct WorkerDeps {
    /// The runtime.
    pub port: RuntimePort,
    /// The node's settings for pods.
    pub node: Arc<NodeContext>,
    /// Crash-loop periods.
    pub restart_policy: BackoffPolicy,
    /// Where reports go.
    pub manager: Addr<PodManager>,
}

/// One pod's actor.
pub struct PodWorker {
    key: PodKey,
    pod: Option<Arc<Pod>>,
    deps: WorkerDeps,
    restarts: Backoff,
    pulls: Backoff,
    first_seen: SystemTime,
    last_status: Option<sergeant_messages::pods::core::PodStatus>,
    /// Whether `kubelet_pod_start_duration_seconds` has this pod already.
    start_recorded: bool,
    terminating: Option<Option<Duration>>,
    busy: bool,
    again: bool,
    timer: Option<SpawnHandle>,
}

impl PodWorker {
    /// The actor of `pod`, or — with `pod` `None` — of a pod found only in the runtime, which
    /// it terminates.
    #[must_use]
    pub fn new(key: PodKey, pod: Option<Arc<Pod>>, deps: WorkerDeps) -> Self {
        let terminating = if pod.is_none() { Some(None) } else { None };
        Self {
            key,
            pod,
            deps,
            restarts: Backoff::default(),
            pulls: Backoff::default(),
            first_seen: SystemTime::now(),
            last_status: None,
            start_recorded: false,
            terminating,
            busy: false,
            again: false,
            timer: None,
        }
    }

    /// Starts a sync now, or right after the one running.
    fn trigger(&mut self, ctx: &mut Context<Self>) {
        if self.busy {
            self.again = true;
            return;
        }
        if let Err(fault) = failpoint::check("pod::sync") {
            panic!("{fault}");
        }
        self.busy = true;
        self.again = false;
        if let Some(handle) = self.timer.take() {
            ctx.cancel_future(handle);
        }
        match (self.terminating, self.pod.clone()) {
            (Some(grace), pod) => self.terminate(grace, pod, ctx),
            (None, Some(pod)) => self.sync(pod, ctx),
            (None, None) => self.busy = false,
        }
    }

    fn sync(&mut self, pod: Arc<Pod>, ctx: &mut Context<Self>) {
        let input = SyncInput {
            pod: Arc::clone(&pod),
            port: self.deps.port.clone(),
            node: Arc::clone(&self.deps.node),
            restarts: self.restarts.clone(),
            pulls: self.pulls.clone(),
            restart_policy: self.deps.restart_policy,
        };
        ctx.spawn(
            sync(input)
                .into_actor(self)
                .map(move |outcome, act, ctx| act.synced(&pod, outcome, ctx)),
        );
    }

    fn synced(&mut self, pod: &Pod, outcome: SyncOutcome, ctx: &mut Context<Self>) {
        self.busy = false;
        self.restarts = outcome.restarts.clone();
        self.pulls = outcome.pulls.clone();
        if let Some(error) = &outcome.error {
            tracing::warn!(pod = %self.key, "sync failed: {error}");
        }
        let reported = report::status(
            pod,
            self.last_status.as_ref(),
            &outcome,
            self.first_seen,
            &self.deps.node,
        );
        self.last_status = reported.status.clone();
        self.record_start(reported.status.as_ref());
        self.deps.manager.do_send(PodReport {
            key: self.key.clone(),
            pod: Arc::new(reported),
        });
        let next = outcome.next_sync.map_or(RESYNC_PERIOD, |at| {
            at.saturating_duration_since(Instant::now())
                .min(RESYNC_PERIOD)
        });
        let next = if outcome.error.is_some() {
            next.min(Duration::from_secs(1))
        } else {
            next
        };
        self.timer = Some(ctx.run_later(next, |act, ctx| act.trigger(ctx)));
        if self.again {
            self.trigger(ctx);
        }
    }

    /// Records `kubelet_pod_start_duration_seconds` (first seen → every app container running)
    /// the first time the pod gets there.
    fn record_start(&mut self, status: Option<&sergeant_messages::pods::core::PodStatus>) {
        let all_running = status
            .and_then(|s| s.container_statuses.as_ref())
            .is_some_and(|all| {
                !all.is_empty()
                    && all
                        .iter()
                        .all(|c| c.state.as_ref().is_some_and(|s| s.running.is_some()))
            });
        if all_running && !self.start_recorded {
            self.start_recorded = true;
            let took = self.first_seen.elapsed().unwrap_or_default();
            metrics::histogram!("kubelet_pod_start_duration_seconds").record(took.as_secs_f64());
        }
    }

    fn terminate(
        &mut self,
        grace: Option<Duration>,
        pod: Option<Arc<Pod>>,
        ctx: &mut Context<Self>,
    ) {
        let port = self.deps.port.clone();
        let node = Arc::clone(&self.deps.node);
        let uid = self.key.uid.clone();
        let work = async move { kill_pod(&port, &node, &uid, pod.as_deref(), grace).await };
        ctx.spawn(work.into_actor(self).map(|result, act, ctx| {
            act.busy = false;
            match result {
                Ok(()) => {
                    tracing::info!(pod = %act.key, "pod terminated");
                    act.deps.manager.do_send(PodTerminated {
                        key: act.key.clone(),
                    });
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
            self.trigger(ctx);
        }
    }
}
