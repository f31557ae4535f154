//! The PLEG actor: relists the runtime (every second, or every five minutes while container
//! events stream and trigger relists as they come), turns changes into lifecycle events for
//! the pod manager, and records the upstream PLEG metrics.

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime};

use actix::{Actor, ActorFutureExt, AsyncContext, Context, WrapFuture};
use sergeant_messages::runtime::cri;
use sergeant_messages::runtime_error::RuntimeError;
use tokio::sync::watch;

use crate::pod_manager::{LifecycleEvents, PodManager};
use crate::runtime::RuntimePort;
use sergeant_core::labels;
use sergeant_core::pleg::diff::{LifecycleEvent, RuntimeView};
use sergeant_core::pleg::subscription::{Subscription, RELIST_PERIOD};
use sergeant_supervisor::failpoint;
use sergeant_supervisor::{ChildEnv, ChildRef};

/// How often the PLEG looks whether a relist is due; in evented mode, each look also shows
/// the PLEG alive to `/healthz`, as upstream's evented PLEG does between relists.
const TICK: Duration = RELIST_PERIOD;

/// When PLEG was last seen active (a relist completed, or, while events stream, a tick of its
/// timer); `/healthz` fails once this is more than 3 minutes old.
pub type PlegHealth = watch::Sender<Option<Instant>>;

/// Relists the runtime and reports what changed.
pub struct Pleg {
    pub(super) env: ChildEnv,
    pub(super) port: RuntimePort,
    pods: ChildRef<PodManager>,
    pub(super) node: String,
    health: PlegHealth,
    view: Option<RuntimeView>,
    last_start: Option<Instant>,
    relisting: bool,
    /// An event came while a relist was running: relist again once it is done.
    relist_again: bool,
    pub(super) subscription: Subscription,
}

impl Pleg {
    /// A PLEG reading the objects of node `node` through `port` and reporting to `pods`.
    #[must_use]
    pub fn new(
        env: &ChildEnv,
        port: RuntimePort,
        pods: ChildRef<PodManager>,
        node: String,
        health: PlegHealth,
    ) -> Self {
        Self {
            env: env.clone(),
            port,
            pods,
            node,
            health,
            view: None,
            last_start: None,
            relisting: false,
            relist_again: false,
            subscription: Subscription::default(),
        }
    }

    /// Relists when the period is up; otherwise, while events stream, shows the PLEG alive.
    fn tick(&mut self, ctx: &mut Context<Self>) {
        // Due within half a tick counts as due, so timer jitter cannot skip a whole period.
        let due = self
            .last_start
            .is_none_or(|last| last.elapsed() + TICK / 2 >= self.subscription.relist_period());
        if due {
            self.relist(ctx);
        } else if self.subscription.is_streaming() {
            self.seen();
        }
    }

    /// Relists as soon as possible: now, or right after the relist already running, which
    /// may have listed before the change that asks for this one.
    pub(super) fn refresh(&mut self, ctx: &mut Context<Self>) {
        if self.relisting {
            self.relist_again = true;
        } else {
            self.relist(ctx);
        }
    }

    fn relist(&mut self, ctx: &mut Context<Self>) {
        if self.relisting {
            return; // the previous relist is still waiting for the runtime
        }
        if let Err(fault) = failpoint::check("pleg::relist") {
            return self.env.fail(ctx, fault);
        }
        let started = Instant::now();
        if let Some(previous) = self.last_start.replace(started) {
            metrics::histogram!("kubelet_pleg_relist_interval_seconds")
                .record(started.duration_since(previous).as_secs_f64());
        }
        self.relisting = true;
        let port = self.port.clone();
        ctx.spawn(
            list(port, self.node.clone())
                .into_actor(self)
                .map(move |listed, act, ctx| {
                    act.relisting = false;
                    metrics::histogram!("kubelet_pleg_relist_duration_seconds")
                        .record(started.elapsed().as_secs_f64());
                    match listed {
                        Ok(view) => act.observe(view),
                        Err(err) => {
                            tracing::debug!("relist failed: {err}");
                            act.env.set_status(format!(
                                "{}; last relist failed: {err}",
                                act.subscription.describe()
                            ));
                        }
                    }
                    if std::mem::take(&mut act.relist_again) {
                        act.relist(ctx);
                    }
                }),
        );
    }

    /// Shows the PLEG alive: to `/healthz`, and in `kubelet_pleg_last_seen_seconds`.
    fn seen(&self) {
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        metrics::gauge!("kubelet_pleg_last_seen_seconds").set(now.as_secs_f64());
        self.health.send_replace(Some(Instant::now()));
    }

    fn observe(&mut self, view: RuntimeView) {
        let events = self.view.as_ref().map_or_else(
            || RuntimeView::default().events_to(&view),
            |old| old.events_to(&view),
        );
        metrics::gauge!("kubelet_running_containers", "container_state" => "running")
            .set(view.running_containers() as f64);
        self.view = Some(view);
        self.seen();
        self.env.set_status(self.subscription.describe());
        if events.is_empty() {
            return;
        }
        let mut by_pod: BTreeMap<String, Vec<LifecycleEvent>> = BTreeMap::new();
        for event in events {
            by_pod.entry(event.pod_uid.clone()).or_default().push(event);
        }
        let batch = by_pod.into_values().flatten().collect();
        if let Err(err) = self.pods.tell(LifecycleEvents(batch)) {
            tracing::debug!(
                "lifecycle events not delivered (pod actors resync by themselves): {err}"
            );
        }
    }
}

/// Lists the containers and sandboxes this node's sergeant made.
async fn list(port: RuntimePort, node: String) -> Result<RuntimeView, RuntimeError> {
    let managed = || [(labels::NODE.to_owned(), node.clone())].into();
    let containers = port
        .call(cri::ListContainersRequest {
            filter: Some(cri::ContainerFilter {
                label_selector: managed(),
                ..Default::default()
            }),
        })
        .await?;
    let sandboxes = port
        .call(cri::ListPodSandboxRequest {
            filter: Some(cri::PodSandboxFilter {
                label_selector: managed(),
                ..Default::default()
            }),
        })
        .await?;
    Ok(RuntimeView::new(&containers.containers, &sandboxes.items))
}

impl Actor for Pleg {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        metrics::describe_histogram!(
            "kubelet_pleg_relist_duration_seconds",
            "Duration of relisting pods in PLEG."
        );
        metrics::describe_histogram!(
            "kubelet_pleg_relist_interval_seconds",
            "Interval between relists in PLEG."
        );
        metrics::describe_gauge!(
            "kubelet_pleg_last_seen_seconds",
            "Timestamp when PLEG was last seen active."
        );
        metrics::describe_gauge!(
            "kubelet_running_containers",
            "Number of containers currently running."
        );
        super::events::describe_metrics();
        self.relist(ctx);
        self.subscribe(ctx);
        ctx.run_interval(TICK, |act, ctx| act.tick(ctx));
    }
}
