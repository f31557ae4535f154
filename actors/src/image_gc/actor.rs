//! The `image-gc` actor: keeps the image records up to date every [`DETECT_PERIOD`], runs a
//! pass ([`super::pass::run`]) every [`PERIOD`] (upstream's) and at once when the policy
//! changes, and one for the eviction manager on demand ([`ReclaimImages`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::{
    Actor, ActorFutureExt, AsyncContext, Context, Handler, Message, ResponseFuture, WrapFuture,
};
use sergeant_config::sergeant::RuntimeAdapterKind;
use sergeant_core::gc::images::{PlanError, Policy, Records};
use tokio::sync::watch;
use tracing::Instrument;

use super::pass::{self, Outcome, PassError, SharedRecords, Trigger, COLLECTED_METRIC};
use crate::config_feed::{self, ConfigState};
use crate::events::{reason, EventSink, EventType};
use crate::runtime::RuntimePort;
use sergeant_supervisor::{failpoint, ChildEnv, ChildSpec, Slot};

/// How often a pass runs (upstream's `ImageGCPeriod`).
pub const PERIOD: Duration = Duration::from_secs(5 * 60);
/// How often the records are brought up to the runtime between passes, so "last used" is
/// known to within this (upstream: at each pass only).
pub const DETECT_PERIOD: Duration = Duration::from_secs(10);
/// The failpoint evaluated at the start of every periodic pass.
const FAILPOINT: &str = "image-gc::tick";

/// Removes unused images as the policy of the configuration says.
pub struct ImageGarbageCollector {
    env: ChildEnv,
    port: RuntimePort,
    config: watch::Receiver<ConfigState>,
    events: EventSink,
    node: String,
    records: SharedRecords,
    began: Instant,
    policy: Option<Policy>,
    passing: bool,
    detecting: bool,
    /// Whether the previous periodic pass failed: a second failure in a row is an event.
    failed_before: bool,
    known: usize,
    last: String,
}

/// The `image-gc` worker of the `node` supervisor, in `slot`: collects through `port` on node
/// `node`, follows the `imageGC*` fields of `config`, reports through `events`.
#[must_use]
pub fn child_spec(
    slot: &Slot<ImageGarbageCollector>,
    port: RuntimePort,
    config: watch::Receiver<ConfigState>,
    events: EventSink,
    node: String,
) -> ChildSpec {
    ChildSpec::worker("image-gc", slot, move |env| ImageGarbageCollector {
        env: env.clone(),
        port: port.clone(),
        config: config.clone(),
        events: events.clone(),
        node: node.clone(),
        records: Arc::new(tokio::sync::Mutex::new(Records::default())),
        began: Instant::now(),
        policy: None,
        passing: false,
        detecting: false,
        failed_before: false,
        known: 0,
        last: "no pass yet".to_owned(),
    })
}

/// Asks for a pass that removes every unused image old enough, whatever the usage: the
/// eviction manager's node-level reclaim under disk pressure, after dead containers.
#[derive(Debug, Clone, Copy)]
pub struct ReclaimImages;

impl Message for ReclaimImages {
    /// Bytes freed (the sizes of the images removed), or why nothing could be decided.
    type Result = Result<u64, PassError>;
}

impl ImageGarbageCollector {
    fn current_policy(&self) -> Policy {
        Policy::of(&self.config.borrow().active.kubelet)
    }

    /// Whether the runtime is the fake one of hollow nodes, whose images take no disk (its
    /// image filesystem is a name only): no periodic pass then.
    fn fake_runtime(&self) -> bool {
        self.config.borrow().active.sergeant.runtime_adapter == RuntimeAdapterKind::Fake
    }

    /// Runs a pass at once when the policy changed.
    fn reconfigure(&mut self, ctx: &mut Context<Self>) {
        let policy = self.current_policy();
        if self.policy.replace(policy) != Some(policy) {
            self.tick(ctx);
        }
    }

    fn detect(&mut self, ctx: &mut Context<Self>) {
        if self.detecting || self.passing {
            return;
        }
        self.detecting = true;
        let (port, records) = (self.port.clone(), self.records.clone());
        let work = async move { pass::detect(&port, &records).await };
        ctx.spawn(work.into_actor(self).map(|result, act, _| {
            act.detecting = false;
            match result {
                Ok(known) => act.known = known,
                Err(err) => tracing::debug!("cannot look at the images: {err}"),
            }
            act.show();
        }));
    }

    fn tick(&mut self, ctx: &mut Context<Self>) {
        if let Err(fault) = failpoint::check(FAILPOINT) {
            return self.env.fail(ctx, fault);
        }
        let policy = self.current_policy();
        if !policy.enabled() || self.passing || self.fake_runtime() {
            self.show();
            return;
        }
        self.passing = true;
        let (port, records, began) = (self.port.clone(), self.records.clone(), self.began);
        let span = tracing::info_span!("image_gc_pass", node = %self.node);
        let work =
            async move { pass::run(&port, &records, Trigger::Periodic, policy, began).await };
        ctx.spawn(
            work.instrument(span)
                .into_actor(self)
                .map(|result, act, _| {
                    act.passing = false;
                    act.report(result);
                }),
        );
    }

    /// Logs, counts and reports a periodic pass as upstream: `FreeDiskSpaceFailed` when less
    /// was freed than asked, `InvalidDiskCapacity` for a zero capacity, `ImageGCFailed` when
    /// a pass fails twice in a row.
    fn report(&mut self, result: Result<Outcome, PassError>) {
        let failure = match result {
            Ok(outcome) => {
                self.known = outcome.known;
                let removed = outcome.executed.removed.len();
                let failed = outcome.executed.failed.len();
                self.last = format!(
                    "last pass removed {removed} images ({} bytes for space), {failed} failed",
                    outcome.executed.freed
                );
                outcome.short_by().map(|(wanted, freed)| {
                    let message = format!(
                        "image garbage collection freed {freed} of the {wanted} bytes needed to \
                         reach the low threshold: no other unused image is old enough to remove"
                    );
                    self.event(reason::FREE_DISK_SPACE_FAILED, message.clone());
                    message
                })
            }
            Err(err) => {
                if matches!(err, PassError::Plan(PlanError::ZeroCapacity)) {
                    self.event(reason::INVALID_DISK_CAPACITY, err.to_string());
                }
                self.last = format!("last pass failed: {err}");
                Some(err.to_string())
            }
        };
        match failure {
            Some(message) => {
                if self.failed_before {
                    tracing::warn!("image garbage collection failed again: {message}");
                    self.event(reason::IMAGE_GC_FAILED, message);
                } else {
                    tracing::warn!("image garbage collection failed: {message}");
                }
                self.failed_before = true;
            }
            None => self.failed_before = false,
        }
        self.show();
    }

    fn event(&self, reason: &'static str, message: String) {
        self.events
            .node(&self.node, EventType::Warning, reason, message);
    }

    fn show(&self) {
        let policy = self.current_policy();
        let mode = if self.fake_runtime() {
            "no periodic pass: the fake runtime's images take no disk".to_owned()
        } else if policy.enabled() {
            let max_age = policy
                .max_age
                .map_or_else(|| "none".to_owned(), |age| format!("{age:?}"));
            format!(
                "collecting unused images every {PERIOD:?}: high {}%, low {}%, minimum age {:?}, maximum age {max_age}",
                policy.high_percent, policy.low_percent, policy.min_age
            )
        } else {
            "image garbage collection off (imageGCHighThresholdPercent 100, no imageMaximumGCAge); \
             disk pressure still reclaims unused images"
                .to_owned()
        };
        self.env.set_status(format!(
            "{mode}; {} images known; {}",
            self.known, self.last
        ));
    }
}

impl Handler<ReclaimImages> for ImageGarbageCollector {
    type Result = ResponseFuture<Result<u64, PassError>>;

    fn handle(&mut self, _: ReclaimImages, _: &mut Context<Self>) -> Self::Result {
        let (port, records, began) = (self.port.clone(), self.records.clone(), self.began);
        let policy = self.current_policy();
        let span = tracing::info_span!("image_gc_reclaim", node = %self.node);
        Box::pin(
            async move {
                pass::run(&port, &records, Trigger::Pressure, policy, began)
                    .await
                    .map(|outcome| {
                        outcome
                            .executed
                            .removed
                            .iter()
                            .fold(0u64, |sum, r| sum.saturating_add(r.size))
                    })
            }
            .instrument(span),
        )
    }
}

impl Actor for ImageGarbageCollector {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        metrics::describe_counter!(
            COLLECTED_METRIC,
            "Total number of images garbage collected by the kubelet, by reason (age or space)."
        );
        self.show();
        config_feed::follow(ctx, self.config.clone(), Self::reconfigure);
        ctx.run_interval(DETECT_PERIOD, |act, ctx| act.detect(ctx));
        ctx.run_interval(PERIOD, |act, ctx| act.tick(ctx));
        // As upstream, the first pass runs at start (the minimum age keeps what it just saw).
        self.reconfigure(ctx);
    }
}
