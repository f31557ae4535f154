//! The `gc` actor: runs a collection pass ([`super::collect`]) every `garbageCollection.period`,
//! one at a time, with the policy of the configuration in force at each pass.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::{Actor, ActorFutureExt, AsyncContext, Context, SpawnHandle, WrapFuture};
use sergeant_config::sergeant::RuntimeAdapterKind;
use tokio::sync::watch;
use tracing::Instrument;

use super::collect::{
    self, Outcome, Pass, PassError, CONTAINERS_METRIC, LOG_DIRS_METRIC, SANDBOXES_METRIC,
};
use crate::config_feed::{self, ConfigState};
use crate::pod_manager::PodManager;
use crate::runtime::RuntimePort;
use sergeant_core::gc::Policy;
use sergeant_supervisor::failpoint;
use sergeant_supervisor::{ChildEnv, ChildRef, ChildSpec, Slot};

/// The failpoint evaluated at the start of every pass.
const FAILPOINT: &str = "gc::tick";
/// How long after start the first pass waits (at most one period).
const FIRST_PASS_DELAY: Duration = Duration::from_secs(1);
/// The histogram of pass durations; its count is the number of passes.
const DURATION_METRIC: &str = "sergeant_container_gc_duration_seconds";

/// The node facts a pass needs, read once from the configuration the actor started with.
#[derive(Debug, Clone)]
struct NodeFacts {
    name: String,
    log_root: PathBuf,
}

/// Collects dead containers, idle sandboxes and the log directories of gone pods.
pub struct GarbageCollector {
    env: ChildEnv,
    port: RuntimePort,
    pods: ChildRef<PodManager>,
    config: watch::Receiver<ConfigState>,
    node: Option<Arc<NodeFacts>>,
    period: Option<Duration>,
    timer: Option<SpawnHandle>,
    collecting: bool,
}

/// The `gc` worker of the `node` supervisor: collects through `port`, asks `pods` which pods
/// exist, and follows `garbageCollection` in `config`.
#[must_use]
pub fn child_spec(
    port: RuntimePort,
    pods: ChildRef<PodManager>,
    config: watch::Receiver<ConfigState>,
) -> ChildSpec {
    ChildSpec::worker("gc", &Slot::new("gc"), move |env| {
        GarbageCollector::new(env, port.clone(), pods.clone(), config.clone())
    })
}

impl GarbageCollector {
    /// A collector; it reads the node's facts once started, then collects right away and
    /// every period.
    #[must_use]
    pub fn new(
        env: &ChildEnv,
        port: RuntimePort,
        pods: ChildRef<PodManager>,
        config: watch::Receiver<ConfigState>,
    ) -> Self {
        Self {
            env: env.clone(),
            port,
            pods,
            config,
            node: None,
            period: None,
            timer: None,
            collecting: false,
        }
    }

    /// Follows a change of the period; the rest of the policy is read at every pass.
    fn reconfigure(&mut self, ctx: &mut Context<Self>) {
        let period = self
            .config
            .borrow_and_update()
            .active
            .sergeant
            .garbage_collection
            .period
            .as_std();
        if self.period == Some(period) || self.node.is_none() {
            return;
        }
        let first = self.period.replace(period).is_none();
        if let Some(timer) = self.timer.take() {
            ctx.cancel_future(timer);
        }
        self.timer = Some(ctx.run_interval(period, |act, ctx| act.tick(ctx)));
        if first {
            // Let the pod manager read its sources first; until then gone pods are not judged.
            ctx.run_later(FIRST_PASS_DELAY.min(period), |act, ctx| act.tick(ctx));
        } else {
            self.tick(ctx); // a new period starts with a pass under the new settings
        }
    }

    fn tick(&mut self, ctx: &mut Context<Self>) {
        if let Err(fault) = failpoint::check(FAILPOINT) {
            return self.env.fail(ctx, fault);
        }
        let Some(node) = self.node.clone() else {
            return;
        };
        if self.collecting {
            return; // the previous pass is still waiting for the runtime
        }
        let active = self.config.borrow().active.clone();
        // The fake runtime writes no logs, and hollow nodes share the host's log root.
        let writes_logs = active.sergeant.runtime_adapter != RuntimeAdapterKind::Fake;
        let pass = Pass {
            port: self.port.clone(),
            pods: self.pods.clone(),
            node: node.name.clone(),
            log_root: writes_logs.then(|| node.log_root.clone()),
            policy: Policy::of(&active.sergeant.garbage_collection),
        };
        self.collecting = true;
        let started = Instant::now();
        let span = tracing::info_span!("gc_pass", node = %node.name);
        ctx.spawn(collect::run(pass).instrument(span).into_actor(self).map(
            move |result, act, _| {
                act.collecting = false;
                metrics::histogram!(DURATION_METRIC).record(started.elapsed().as_secs_f64());
                act.report(&result);
            },
        ));
    }

    fn report(&self, result: &Result<Outcome, PassError>) {
        let every = self.period.unwrap_or_default();
        let last = match result {
            Ok(outcome) => {
                let waiting = if outcome.synced {
                    ""
                } else {
                    "; gone pods wait until the pod sources are read"
                };
                let failed =
                    outcome.containers.failed + outcome.sandboxes.failed + outcome.log_dirs.failed;
                format!(
                    "last pass removed {} containers, {} sandboxes, {} pod log directories ({failed} failed){waiting}",
                    outcome.containers.removed, outcome.sandboxes.removed, outcome.log_dirs.removed
                )
            }
            Err(err) => {
                tracing::debug!("garbage collection pass skipped: {err}");
                format!("last pass skipped: {err}")
            }
        };
        self.env.set_status(format!(
            "collecting dead containers every {every:?} (unused images: image-gc); {last}"
        ));
    }
}

impl Actor for GarbageCollector {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        metrics::describe_counter!(
            CONTAINERS_METRIC,
            "Dead containers removed by the garbage collector."
        );
        metrics::describe_counter!(
            SANDBOXES_METRIC,
            "Pod sandboxes removed by the garbage collector."
        );
        metrics::describe_counter!(
            LOG_DIRS_METRIC,
            "Log directories of gone pods removed by the garbage collector."
        );
        metrics::describe_histogram!(
            DURATION_METRIC,
            "Duration of a garbage collection pass of dead containers and sandboxes."
        );
        config_feed::follow(ctx, self.config.clone(), Self::reconfigure);
        self.env.set_status("reading the node's settings");
        let config = self.config.clone();
        let read = async move { config_feed::node_context(&config).await };
        ctx.spawn(read.into_actor(self).map(|node, act, ctx| {
            match node {
                Ok(node) => {
                    act.node = Some(Arc::new(NodeFacts {
                        name: node.node_name,
                        log_root: node.pod_log_root,
                    }));
                    act.reconfigure(ctx);
                }
                Err(reason) => act
                    .env
                    .fail(ctx, format!("cannot read the node's settings: {reason}")),
            }
        }));
    }
}
