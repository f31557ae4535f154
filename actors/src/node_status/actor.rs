//! The `node-status` actor: in managed mode it registers the Node, keeps its status current
//! ([`super::sync`]) every `nodeStatusUpdateFrequency` and renews its lease ([`super::lease`])
//! every quarter of `nodeLeaseDurationSeconds`, retrying with back-off while the API server is
//! away. Standalone it only says so. It never changes anything in the runtime.

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::{
    Actor, ActorFutureExt, ActorStreamExt, AsyncContext, Context, ContextFutureSpawner,
    SpawnHandle, WrapFuture,
};
use sergeant_core::cni::NetworkReadiness;
use sergeant_core::node_status::conditions::not_ready_reason;
use sergeant_core::node_status::facts::{MachineFacts, RuntimeHealth};
use sergeant_core::node_status::lease::Holder;
use sergeant_host::machine;
use tokio::sync::watch;
use tracing::Instrument;

use super::error::ApiCallError;
use super::lease;
use super::sync::{self, Action, Outcome, Round};
use crate::config_feed::ConfigState;
use crate::pressure_feed::PressureFeed;
use crate::runtime::RuntimePort;
use k8s_openapi::api::coordination::v1::Lease;
use sergeant_core::backoff::Doubling;
use sergeant_kube_api::ObjectCache;
use sergeant_supervisor::failpoint;
use sergeant_supervisor::ChildEnv;

/// The failpoint evaluated at every status round (and every second when standalone).
const FAILPOINT: &str = "node-status::tick";
/// How often a standalone node-status evaluates its failpoint.
const STANDALONE_TICK: Duration = Duration::from_secs(1);
/// The upstream gauge naming the node (value 1).
const NODE_NAME_METRIC: &str = "kubelet_node_name";
const STATUS_METRIC: &str = "sergeant_node_status_updates_total";
const LEASE_METRIC: &str = "sergeant_node_lease_renewals_total";
/// Back-off of status rounds while they fail (never longer than the update period).
const STATUS_RETRY_FIRST: Duration = Duration::from_secs(1);
const STATUS_RETRY_MAX: Duration = Duration::from_secs(10);
/// Back-off of lease renewals while they fail (upstream's lease controller caps it at 7 s).
const LEASE_RETRY_FIRST: Duration = Duration::from_millis(200);
const LEASE_RETRY_MAX: Duration = Duration::from_secs(7);

/// What managed mode talks to.
#[derive(Clone)]
pub struct ManagedDeps {
    /// The API server.
    pub client: kube::Client,
    /// The runtime, read for its version and images.
    pub port: RuntimePort,
    /// The runtime's health, which decides `Ready`.
    pub health: watch::Receiver<RuntimeHealth>,
    /// The CNI adapter's verdict, which `Ready` also needs (`None`: no check made).
    pub cni: watch::Receiver<Option<NetworkReadiness>>,
    /// The eviction manager's pressure conditions.
    pub pressure: PressureFeed,
    /// The pods' config maps and secrets, told the TTL of the Node's annotation.
    pub objects: ObjectCache,
}

/// One of the two loops (status, lease): whether a call is out, whether a round was asked for
/// while it was, the next attempt, the back-off, and the counter and log line of its results.
struct Loop {
    what: &'static str,
    metric: &'static str,
    busy: bool,
    /// A round was asked for while a call was out (a pressure condition changed during a
    /// status round, say): the next one follows as soon as that call succeeds, rather than a
    /// period later.
    again: bool,
    timer: Option<SpawnHandle>,
    retry: Doubling,
    last_error: Option<String>,
}

impl Loop {
    fn new(what: &'static str, metric: &'static str, first: Duration, max: Duration) -> Self {
        Self {
            what,
            metric,
            busy: false,
            again: false,
            timer: None,
            retry: Doubling::new(first, max),
            last_error: None,
        }
    }

    /// Asks for a round: whether one may start now. While a call is out it may not, and the
    /// request is kept for when that call ends ([`Loop::finished`]).
    fn request(&mut self) -> bool {
        if self.busy {
            self.again = true;
        }
        !self.busy
    }

    /// Records the end of an attempt (`Ok` with the result label, or the error) and returns
    /// the delay before the next: `period` after a success (none when a round was asked for
    /// meanwhile), the back-off after a failure.
    fn finished(
        &mut self,
        result: Result<&'static str, ApiCallError>,
        period: Duration,
    ) -> Duration {
        self.busy = false;
        let asked_meanwhile = std::mem::take(&mut self.again);
        match result {
            Ok(label) => {
                metrics::counter!(self.metric, "result" => label).increment(1);
                self.retry.reset();
                self.last_error = None;
                if asked_meanwhile {
                    Duration::ZERO
                } else {
                    period
                }
            }
            Err(error) => {
                metrics::counter!(self.metric, "result" => "error").increment(1);
                // Loud when it starts failing, quiet while it keeps failing: the status line
                // and the counter carry on.
                if self.last_error.is_none() {
                    tracing::warn!("{} failed (retrying with back-off): {error}", self.what);
                } else {
                    tracing::debug!("{} failed again: {error}", self.what);
                }
                self.last_error = Some(error.to_string());
                self.retry.next_delay().min(period)
            }
        }
    }
}

/// Registers the node, reports its status and renews its lease (managed mode).
pub struct NodeStatus {
    env: ChildEnv,
    config: watch::Receiver<ConfigState>,
    managed: Option<ManagedDeps>,
    facts: Option<Arc<MachineFacts>>,
    node_uid: Option<String>,
    runtime_version: String,
    last_report: Option<Instant>,
    /// Why the node was last reported not ready (`Some(None)`: ready; `None`: not yet).
    reported: Option<Option<String>>,
    lease_renewed: Option<Instant>,
    /// The lease as the API server returned it at the last renewal, the next one's base.
    last_lease: Option<Lease>,
    status: Loop,
    lease: Loop,
}

impl NodeStatus {
    /// The actor; `managed` is `None` in standalone mode.
    #[must_use]
    pub fn new(
        env: &ChildEnv,
        config: watch::Receiver<ConfigState>,
        managed: Option<ManagedDeps>,
    ) -> Self {
        Self {
            env: env.clone(),
            config,
            managed,
            facts: None,
            node_uid: None,
            runtime_version: String::new(),
            last_report: None,
            reported: None,
            lease_renewed: None,
            last_lease: None,
            status: Loop::new(
                "node status update",
                STATUS_METRIC,
                STATUS_RETRY_FIRST,
                STATUS_RETRY_MAX,
            ),
            lease: Loop::new(
                "node lease renewal",
                LEASE_METRIC,
                LEASE_RETRY_FIRST,
                LEASE_RETRY_MAX,
            ),
        }
    }

    fn config(&self) -> Arc<sergeant_config::NodeConfig> {
        self.config.borrow().active.clone()
    }

    fn span(&self) -> tracing::Span {
        let node = self
            .facts
            .as_ref()
            .map(|f| f.node_name.clone())
            .unwrap_or_default();
        tracing::info_span!("node_status", node = %node)
    }

    fn status_tick(&mut self, ctx: &mut Context<Self>) {
        if let Err(fault) = failpoint::check(FAILPOINT) {
            return self.env.fail(ctx, fault);
        }
        let (Some(managed), Some(facts)) = (self.managed.clone(), self.facts.clone()) else {
            return;
        };
        if !self.status.request() {
            return;
        }
        if let Some(timer) = self.status.timer.take() {
            ctx.cancel_future(timer);
        }
        let config = self.config();
        let report_every = config.kubelet.node_status_report_frequency.as_std();
        let round = Round {
            client: managed.client,
            port: managed.port,
            facts,
            config,
            health: managed.health.borrow().clone(),
            cni: managed.cni.borrow().clone(),
            pressure: managed.pressure.borrow().clone(),
            runtime_version: self.runtime_version.clone(),
            report_due: self
                .last_report
                .is_none_or(|at| at.elapsed() >= report_every),
        };
        self.status.busy = true;
        ctx.spawn(
            sync::run(round)
                .instrument(self.span())
                .into_actor(self)
                .map(|result, act, ctx| act.status_done(ctx, result)),
        );
    }

    fn status_done(&mut self, ctx: &mut Context<Self>, result: Result<Outcome, ApiCallError>) {
        let period = self.config().kubelet.node_status_update_frequency.as_std();
        let result = result.map(|outcome| {
            if outcome.action != Action::Unchanged {
                self.last_report = Some(Instant::now());
            }
            if outcome.action == Action::Registered {
                tracing::info!(uid = ?outcome.node_uid, "node registered");
            }
            self.reported = Some(outcome.not_ready);
            if let Some(managed) = &self.managed {
                managed.objects.set_node_ttl(outcome.object_ttl);
                if !outcome.pod_cidrs.is_empty() {
                    managed.port.node_pod_cidrs(outcome.pod_cidrs);
                }
            }
            self.node_uid = outcome.node_uid;
            self.runtime_version = outcome.runtime_version;
            outcome.action.label()
        });
        let delay = self.status.finished(result, period);
        self.status.timer = Some(ctx.run_later(delay, Self::status_tick));
        if self.lease_renewed.is_none() && !self.lease.busy && self.lease.timer.is_none() {
            self.lease_tick(ctx); // the first renewal waits for the first round, to own the lease
        }
        self.show();
    }

    fn lease_tick(&mut self, ctx: &mut Context<Self>) {
        let (Some(managed), Some(facts)) = (self.managed.clone(), self.facts.clone()) else {
            return;
        };
        if self.lease.busy {
            return;
        }
        let holder = Holder {
            node: facts.node_name.clone(),
            node_uid: self.node_uid.clone(),
            duration_seconds: self.config().kubelet.node_lease_duration_seconds,
        };
        self.lease.busy = true;
        let mut last = self.last_lease.take();
        let renew = async move {
            let result = lease::renew(managed.client, &holder, &mut last).await;
            (result, last)
        };
        ctx.spawn(renew.instrument(self.span()).into_actor(self).map(
            |(result, last), act, ctx| {
                act.last_lease = last;
                let seconds = act.config().kubelet.node_lease_duration_seconds;
                let period = Duration::from_secs(u64::try_from(seconds.max(1)).unwrap_or(1)) / 4;
                let result = result.map(|renewal| {
                    act.lease_renewed = Some(Instant::now());
                    renewal.label()
                });
                let delay = act.lease.finished(result, period);
                act.lease.timer = Some(ctx.run_later(delay, Self::lease_tick));
                act.show();
            },
        ));
    }

    /// A new runtime health or CNI verdict: report at once when it changes readiness, rather
    /// than at the next period.
    fn health_changed(&mut self, ctx: &mut Context<Self>) {
        let Some(managed) = &self.managed else {
            return;
        };
        let now = not_ready_reason(&managed.health.borrow(), managed.cni.borrow().as_ref());
        if self.reported.is_some() && self.reported.as_ref() != Some(&now) {
            self.status_tick(ctx);
        }
    }

    /// The status line on `/debug/supervision`.
    fn show(&self) {
        let name = self
            .facts
            .as_ref()
            .map(|f| f.node_name.as_str())
            .unwrap_or_default();
        let registered = if self.node_uid.is_some() {
            format!("registered as node/{name}")
        } else {
            format!("registering node/{name}")
        };
        let ready = match &self.reported {
            None => "readiness not reported yet".to_owned(),
            Some(None) => "Ready".to_owned(),
            Some(Some(reason)) => format!("NotReady ({reason})"),
        };
        let lease = match self.lease_renewed {
            Some(at) => format!("lease renewed {}s ago", at.elapsed().as_secs()),
            None => "lease not renewed yet".to_owned(),
        };
        let errors: Vec<&str> = [&self.status.last_error, &self.lease.last_error]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        let last_error = if errors.is_empty() {
            String::new()
        } else {
            format!("; last error: {}", errors.join("; "))
        };
        self.env
            .set_status(format!("{registered}; {ready}; {lease}{last_error}"));
    }

    fn start_managed(&mut self, ctx: &mut Context<Self>, managed: ManagedDeps) {
        let (health, cni, pressure) = (managed.health, managed.cni, managed.pressure);
        self.env.set_status("reading the machine facts");
        let config = self.config();
        let read = async move { tokio::task::spawn_blocking(move || machine::read(&config)).await };
        ctx.spawn(read.into_actor(self).map(move |facts, act, ctx| {
            let fail = |act: &mut Self, ctx: &mut Context<Self>, reason: &dyn std::fmt::Display| {
                act.env
                    .fail(ctx, format!("cannot read the machine facts: {reason}"));
            };
            match facts {
                Ok(Ok(facts)) => {
                    metrics::gauge!(NODE_NAME_METRIC, "node" => facts.node_name.clone()).set(1.0);
                    act.facts = Some(Arc::new(facts));
                    act.show();
                    act.status_tick(ctx);
                    follow_health(ctx, health);
                    follow_health(ctx, cni);
                    follow_pressure(ctx, pressure);
                }
                Ok(Err(error)) => fail(act, ctx, &error),
                Err(unfinished) => {
                    fail(act, ctx, &format!("reading did not finish: {unfinished}"));
                }
            }
        }));
    }
}

/// Calls [`NodeStatus::health_changed`] on every new runtime health or CNI verdict.
fn follow_health<T: Send + Sync + 'static>(
    ctx: &mut Context<NodeStatus>,
    health: watch::Receiver<T>,
) {
    let changes = futures::stream::unfold(health, |mut health| async move {
        health.changed().await.ok().map(|()| ((), health))
    });
    actix::fut::wrap_stream::<_, NodeStatus>(changes)
        .map(|(), act, ctx| act.health_changed(ctx))
        .finish()
        .spawn(ctx);
}

/// Reports at once on every change of the pressure conditions, once the node is registered.
fn follow_pressure(ctx: &mut Context<NodeStatus>, pressure: PressureFeed) {
    let changes = futures::stream::unfold(pressure, |mut pressure| async move {
        pressure.changed().await.ok().map(|()| ((), pressure))
    });
    actix::fut::wrap_stream::<_, NodeStatus>(changes)
        .map(|(), act, ctx| {
            if act.reported.is_some() {
                act.status_tick(ctx);
            }
        })
        .finish()
        .spawn(ctx);
}

impl Actor for NodeStatus {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        metrics::describe_gauge!(NODE_NAME_METRIC, "The node's name. The count is always 1.");
        metrics::describe_counter!(
            STATUS_METRIC,
            "Node status rounds by result: registered, patched, unchanged, error."
        );
        metrics::describe_counter!(
            LEASE_METRIC,
            "Node lease renewals by result: created, renewed, error."
        );
        match self.managed.clone() {
            Some(managed) => self.start_managed(ctx, managed),
            None => {
                self.env.set_status("standalone: no API server");
                ctx.run_interval(STANDALONE_TICK, Self::status_tick);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status_loop() -> Loop {
        Loop::new(
            "node status update",
            STATUS_METRIC,
            STATUS_RETRY_FIRST,
            STATUS_RETRY_MAX,
        )
    }

    fn failure() -> ApiCallError {
        ApiCallError {
            operation: "patch status of",
            object: "node/n".to_owned(),
            source: kube::Error::LinesCodecMaxLineLengthExceeded,
        }
    }

    const PERIOD: Duration = Duration::from_secs(10);

    #[test]
    fn a_round_asked_for_while_one_is_out_follows_it_at_once() {
        let mut status = status_loop();
        assert!(status.request(), "nothing out: a round may start");
        status.busy = true;
        assert!(
            !status.request(),
            "a call is out: no second round beside it"
        );
        assert_eq!(status.finished(Ok("patched"), PERIOD), Duration::ZERO);
        assert!(!status.busy);
        assert_eq!(
            status.finished(Ok("unchanged"), PERIOD),
            PERIOD,
            "asked once, run again once"
        );
    }

    #[test]
    fn a_round_asked_for_while_a_failing_one_is_out_waits_for_the_back_off() {
        let mut status = status_loop();
        status.busy = true;
        assert!(!status.request());
        assert_eq!(status.finished(Err(failure()), PERIOD), STATUS_RETRY_FIRST);
    }

    #[test]
    fn without_a_request_the_next_round_is_a_period_later() {
        let mut status = status_loop();
        status.busy = true;
        assert_eq!(status.finished(Ok("patched"), PERIOD), PERIOD);
    }
}
