//! The PLEG actor: relists every second, turns changes into lifecycle events for the pod
//! manager, and records the upstream PLEG metrics.

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime};

use actix::{Actor, ActorFutureExt, AsyncContext, Context, WrapFuture};
use sergeant_messages::pods::{LifecycleEvent, LifecycleEvents};
use sergeant_messages::runtime::cri;
use sergeant_messages::runtime_error::RuntimeError;
use tokio::sync::watch;

use super::diff::RuntimeView;
use crate::failpoint;
use crate::pod::labels;
use crate::pod_manager::PodManager;
use crate::runtime::RuntimePort;
use crate::supervisor::{ChildEnv, ChildRef};

/// How often the runtime is relisted (upstream's default).
const RELIST_PERIOD: Duration = Duration::from_secs(1);

/// When PLEG last completed a relist; `/healthz` fails once this is more than 3 minutes old.
pub type PlegHealth = watch::Sender<Option<Instant>>;

/// Relists the runtime and reports what changed.
pub struct Pleg {
    env: ChildEnv,
    port: RuntimePort,
    pods: ChildRef<PodManager>,
    node: String,
    health: PlegHealth,
    view: Option<RuntimeView>,
    last_start: Option<Instant>,
    relisting: bool,
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
                .map(move |listed, act, _| {
                    act.relisting = false;
                    metrics::histogram!("kubelet_pleg_relist_duration_seconds")
                        .record(started.elapsed().as_secs_f64());
                    match listed {
                        Ok(view) => act.observe(view),
                        Err(err) => {
                            tracing::debug!("relist failed: {err}");
                            act.env.set_status(format!(
                                "relisting every {RELIST_PERIOD:?}; last relist failed: {err}"
                            ));
                        }
                    }
                }),
        );
    }

    fn observe(&mut self, view: RuntimeView) {
        let events = self.view.as_ref().map_or_else(
            || RuntimeView::default().events_to(&view),
            |old| old.events_to(&view),
        );
        metrics::gauge!("kubelet_running_containers", "container_state" => "running")
            .set(view.running_containers() as f64);
        self.view = Some(view);
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        metrics::gauge!("kubelet_pleg_last_seen_seconds").set(now.as_secs_f64());
        self.health.send_replace(Some(Instant::now()));
        self.env
            .set_status(format!("relisting every {RELIST_PERIOD:?}"));
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
        self.relist(ctx);
        ctx.run_interval(RELIST_PERIOD, |act, ctx| act.relist(ctx));
    }
}
