//! The `eviction-manager` actor: one decision per stats sample, at most one reclaim at a time.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::{
    Actor, ActorFutureExt, ActorStreamExt, AsyncContext, Context, ContextFutureSpawner, WrapFuture,
};
use sergeant_config::sergeant::RuntimeAdapterKind;
use sergeant_core::eviction::decide::{decide, State};
use sergeant_core::eviction::signals::Pressure;
use sergeant_core::eviction::thresholds;
use sergeant_core::gc::Policy;
use sergeant_core::spec::NodeContext;
use sergeant_host::stats::Clock;
use tokio::sync::watch;
use tracing::Instrument;

use super::observe;
use super::reclaim::{Outcome, Reclaimer, EVICTIONS_METRIC, STATS_AGE_METRIC};
use crate::config_feed::{self, ConfigState};
use crate::gc::collect::Pass;
use crate::image_gc::ImageGarbageCollector;
use crate::pod_manager::PodManager;
use crate::runtime::RuntimePort;
use crate::stats::StatsFeed;
use sergeant_supervisor::{failpoint, ChildEnv, ChildRef, ChildSpec, Slot};

/// The failpoint evaluated at every decision.
const FAILPOINT: &str = "eviction-manager::decide";

/// What the eviction manager reads and where it writes.
#[derive(Clone)]
pub struct EvictionDeps {
    /// The runtime, for node-level reclaim and to see an evicted pod's containers stop.
    pub port: RuntimePort,
    /// The live configuration: the thresholds and timings, read at every decision.
    pub config: watch::Receiver<ConfigState>,
    /// The stats provider's samples.
    pub stats: StatsFeed,
    /// The pod manager: the pods, and where evictions go.
    pub pods: ChildRef<PodManager>,
    /// The image collector, asked for every unused image under disk pressure.
    pub images: ChildRef<ImageGarbageCollector>,
    /// Where the pressure conditions are published (it outlives the actor).
    pub pressure: watch::Sender<BTreeSet<Pressure>>,
}

/// Decides at every sample and reclaims.
pub struct EvictionManager {
    env: ChildEnv,
    deps: EvictionDeps,
    state: State,
    node: Option<Arc<NodeContext>>,
    /// Whether a reclaim is under way; samples meanwhile only update the conditions.
    reclaiming: bool,
    /// When the last reclaim ended: a sample read before then does not show what it freed,
    /// so it only updates the conditions too.
    reclaimed_at: Option<Clock>,
}

/// The `eviction-manager` worker of the `node` supervisor.
#[must_use]
pub fn child_spec(deps: EvictionDeps) -> ChildSpec {
    ChildSpec::worker(
        "eviction-manager",
        &Slot::new("eviction-manager"),
        move |env| EvictionManager {
            env: env.clone(),
            deps: deps.clone(),
            state: State::default(),
            node: None,
            reclaiming: false,
            reclaimed_at: None,
        },
    )
}

impl EvictionManager {
    fn sampled(&mut self, ctx: &mut Context<Self>) {
        if let Err(fault) = failpoint::check(FAILPOINT) {
            return self.env.fail(ctx, fault);
        }
        let latest = self.deps.stats.borrow_and_update().clone();
        let sample = match latest {
            Some(Ok(sample)) => sample,
            Some(Err(err)) => {
                self.env.set_status(format!(
                    "no decision: the latest stats sample failed: {err}"
                ));
                return;
            }
            None => return,
        };
        let Some(node) = self.node.clone() else {
            return;
        };
        let config = self.deps.config.borrow().active.clone();
        let kubelet = &config.kubelet;
        let thresholds = thresholds::of_config(kubelet);
        let observations = observe::signals(&sample);
        let decision = decide(
            &thresholds,
            &observations,
            &mut self.state,
            kubelet.eviction_pressure_transition_period.as_std(),
            Instant::now(),
        );
        self.publish(&decision.pressure);
        let met: Vec<String> = decision
            .met
            .iter()
            .map(|t| format!("{}<{}", t.signal, t.value))
            .collect();
        self.env.set_status(format!(
            "{} thresholds; pressure: {}; met: {}{}",
            thresholds.len(),
            names(&decision.pressure),
            if met.is_empty() {
                "none".to_owned()
            } else {
                met.join(", ")
            },
            if self.reclaiming { "; reclaiming" } else { "" }
        ));
        let Some(reclaim) = decision.reclaim else {
            return;
        };
        let stale = self
            .reclaimed_at
            .is_some_and(|ended| sample.node.clock.ns() < ended.ns());
        if self.reclaiming || stale {
            return;
        }
        self.reclaiming = true;
        let writes_logs = config.sergeant.runtime_adapter != RuntimeAdapterKind::Fake;
        let reclaimer = Reclaimer {
            port: self.deps.port.clone(),
            pods: self.deps.pods.clone(),
            images: self.deps.images.clone(),
            gc: Pass {
                port: self.deps.port.clone(),
                pods: self.deps.pods.clone(),
                node: node.node_name.clone(),
                log_root: writes_logs.then(|| node.pod_log_root.clone()),
                policy: Policy::of(&config.sergeant.garbage_collection),
            },
            node,
            max_pod_grace: Duration::from_secs(
                u64::try_from(kubelet.eviction_max_pod_grace_period).unwrap_or(0),
            ),
        };
        let span = tracing::info_span!("eviction", signal = %reclaim.threshold.signal);
        let work = async move { reclaimer.run(sample, reclaim).await };
        ctx.spawn(
            work.instrument(span)
                .into_actor(self)
                .map(|outcome, act, _| {
                    act.reclaiming = false;
                    act.reclaimed_at = Some(Clock::read());
                    match outcome {
                        Outcome::ReclaimedOnNode => {
                            tracing::info!(
                                "node-level reclaim relieved the pressure; no pod evicted"
                            );
                        }
                        Outcome::Evicted { pod, cleaned_up } => {
                            tracing::info!(pod, cleaned_up, "eviction done");
                        }
                        Outcome::NothingToEvict(why) => tracing::warn!("nothing to evict: {why}"),
                    }
                }),
        );
    }

    /// Publishes the pressure conditions, logging each change.
    fn publish(&self, pressure: &BTreeSet<Pressure>) {
        self.deps.pressure.send_if_modified(|current| {
            if current == pressure {
                return false;
            }
            for p in Pressure::ALL {
                match (current.contains(&p), pressure.contains(&p)) {
                    (false, true) => tracing::warn!(condition = %p, "node under pressure"),
                    (true, false) => tracing::info!(condition = %p, "pressure over"),
                    _ => {}
                }
            }
            current.clone_from(pressure);
            true
        });
    }
}

fn names(pressure: &BTreeSet<Pressure>) -> String {
    if pressure.is_empty() {
        return "none".to_owned();
    }
    pressure
        .iter()
        .map(|p| p.condition_type())
        .collect::<Vec<_>>()
        .join(", ")
}

impl Actor for EvictionManager {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        metrics::describe_counter!(
            EVICTIONS_METRIC,
            "Cumulative number of pod evictions by eviction signal"
        );
        metrics::describe_histogram!(
            STATS_AGE_METRIC,
            metrics::Unit::Seconds,
            "Time between when stats are collected, and when pod is evicted based on those stats by eviction signal"
        );
        self.env.set_status("reading the node's settings");
        let config = self.deps.config.clone();
        let read = async move { config_feed::node_context(&config).await };
        ctx.spawn(read.into_actor(self).map(|node, act, ctx| {
            match node {
                Ok(node) => {
                    act.node = Some(Arc::new(node));
                    act.env.set_status("waiting for the first stats sample");
                    let samples =
                        futures::stream::unfold(act.deps.stats.clone(), |mut feed| async {
                            feed.changed().await.ok().map(|()| ((), feed))
                        });
                    actix::fut::wrap_stream::<_, Self>(samples)
                        .map(|(), act, ctx| act.sampled(ctx))
                        .finish()
                        .spawn(ctx);
                    act.sampled(ctx);
                }
                Err(reason) => act
                    .env
                    .fail(ctx, format!("cannot read the node's settings: {reason}")),
            }
        }));
    }
}
