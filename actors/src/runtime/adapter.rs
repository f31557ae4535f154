//! The runtime-adapter actor: serves the runtime port by forwarding each call to the adapter
//! currently in service, and swaps that adapter live when the configuration asks for another
//! kind or endpoint.
//!
//! A swap starts the new adapter beside the old one and shakes hands with it (`Version`). Only
//! when it answers do new calls go to it; the old adapter finishes the calls it already has and
//! is then stopped, so no call is lost or left hanging. When the new adapter does not answer,
//! the old one stays in service and the failure is logged, counted
//! (`sergeant_runtime_adapter_swap_failures_total`) and shown in this actor's status.
//!
//! Image pulls pass a gate: one at a time with `serializeImagePulls` (the default), or up to
//! `maxParallelImagePulls`. Before it, `registryPullQPS`/`registryBurst` (a token bucket, as
//! upstream's throttled image service): a pull without a token fails at once with "pull QPS
//! exceeded", and the pod's image back-off retries it.
//!
//! Container event subscriptions are relayed from the adapter in service and end when it is
//! swapped out (see [`super::events`]), so their subscriber subscribes again to the new one.

use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::{
    Actor, ActorFutureExt, AsyncContext, Context, Handler, Message, Recipient, ResponseActFuture,
    WrapFuture,
};
use sergeant_config::NodeConfig;
use sergeant_core::cni::pod_cidr::PodCidr;
use sergeant_core::node_status::facts::RuntimeHealth;
use sergeant_core::rate::TokenBucket;
use sergeant_messages::container_events::SubscribeContainerEvents;
use sergeant_messages::runtime::{
    cri, RuntimeCall, RuntimeOperation, RuntimeRequest, RuntimeResponse,
};
use sergeant_messages::runtime_error::RuntimeError;
use tokio::sync::{watch, Semaphore};

use super::health;
use super::spec::AdapterSpec;
use crate::config_feed::ConfigState;
use sergeant_supervisor::failpoint;
use sergeant_supervisor::{ChildEnv, JoinOutcome, Running};

/// An adapter started by the factory: where to send calls, and its handle.
pub struct StartedAdapter {
    /// The adapter actor's runtime port.
    pub recipient: Recipient<RuntimeCall>,
    /// Where to subscribe to its container events; `None` for an adapter that streams none
    /// (subscribers are answered `Unimplemented` and relist).
    pub events: Option<Recipient<SubscribeContainerEvents>>,
    /// Its incarnation, to watch for its end and to stop it.
    pub running: Running,
}

/// Starts the adapter a spec asks for; provided by `main`, which knows the concrete adapters.
pub type AdapterFactory = Rc<dyn Fn(&AdapterSpec) -> Result<StartedAdapter, AdapterStartError>>;

/// Why the factory could not start an adapter (a bad endpoint, a thread that could not make
/// it): the concrete adapter's own error, kept as it is. Boxed, since `main` knows the
/// adapters and this crate does not.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct AdapterStartError(pub Box<dyn std::error::Error + Send + Sync>);

impl AdapterStartError {
    /// The adapter's own `error`.
    pub fn new(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self(error.into())
    }
}

/// Why a new adapter was not put in service: it could not be started, or it did not answer
/// its handshake. Its Display is the reason in the swap's failure (log and status).
#[derive(Debug, thiserror::Error)]
enum SwapError {
    /// The factory could not start it.
    #[error(transparent)]
    Start(#[from] AdapterStartError),
    /// It answered the `Version` handshake with another operation's answer.
    #[error("answered the handshake with {0}")]
    WrongAnswer(&'static str),
    /// It answered the handshake with an error.
    #[error(transparent)]
    Refused(RuntimeError),
    /// It ended before answering.
    #[error("the adapter died during the handshake")]
    Died,
    /// It did not answer within the handshake's timeout.
    #[error("no answer to the handshake within {0:?}")]
    NoAnswer(Duration),
}

/// One adapter this actor started, in service or draining.
struct Backend {
    id: u64,
    spec: AdapterSpec,
    recipient: Recipient<RuntimeCall>,
    events: Option<Recipient<SubscribeContainerEvents>>,
    running: Option<Running>,
    in_flight: usize,
}

/// Serves the runtime port and owns the adapter behind it.
pub struct RuntimeAdapter {
    env: ChildEnv,
    factory: AdapterFactory,
    config: watch::Receiver<ConfigState>,
    health: watch::Sender<RuntimeHealth>,
    active: Option<Backend>,
    retired: Vec<Backend>,
    candidate: Option<(u64, AdapterSpec)>,
    swap_error: Option<String>,
    next_id: u64,
    polls: health::PollSchedule,
    pulls: Option<Arc<Semaphore>>,
    /// `registryPullQPS`/`registryBurst`; none when `registryPullQPS` is 0 (no limit).
    pull_rate: Option<TokenBucket>,
    /// The id of the backend in service (0 before the first); event relays and swap waiters
    /// watch it.
    pub(super) in_service: watch::Sender<u64>,
    /// The backend that last answered a subscription `Unimplemented`.
    pub(super) events_refused_by: Option<u64>,
    /// The pod CIDR the runtime should have and which adapter was told (see `pod_cidr.rs`).
    pub(super) pod_cidr: PodCidr,
}

impl RuntimeAdapter {
    /// The runtime-adapter actor; it starts the configured adapter when started and publishes
    /// the runtime's health to `health`.
    #[must_use]
    pub fn new(
        env: &ChildEnv,
        factory: AdapterFactory,
        config: watch::Receiver<ConfigState>,
        health: watch::Sender<RuntimeHealth>,
    ) -> Self {
        Self {
            env: env.clone(),
            factory,
            config,
            health,
            active: None,
            retired: Vec::new(),
            candidate: None,
            swap_error: None,
            next_id: 0,
            polls: health::PollSchedule::default(),
            pulls: None,
            pull_rate: None,
            in_service: watch::Sender::new(0),
            events_refused_by: None,
            pod_cidr: PodCidr::default(),
        }
    }

    /// The backend in service and its runtime port; `None` when no backend is in service.
    pub(super) fn in_service_port(&self) -> Option<(u64, Recipient<RuntimeCall>)> {
        self.active.as_ref().map(|b| (b.id, b.recipient.clone()))
    }

    /// The backend in service and where to subscribe to its events (`None` when it streams
    /// none); `None` when no backend is in service.
    pub(super) fn event_source(
        &self,
    ) -> Option<(u64, Option<Recipient<SubscribeContainerEvents>>)> {
        self.active.as_ref().map(|b| (b.id, b.events.clone()))
    }

    /// Puts `backend` in service and tells the watchers.
    fn serve(&mut self, backend: Backend) {
        set_info(&backend.spec, true);
        self.in_service.send_replace(backend.id);
        self.active = Some(backend);
    }

    fn desired(&self) -> AdapterSpec {
        AdapterSpec::of(&self.config.borrow().active)
    }

    /// Starts an adapter for `spec` and watches for its end.
    fn launch(
        &mut self,
        spec: &AdapterSpec,
        ctx: &mut Context<Self>,
    ) -> Result<Backend, AdapterStartError> {
        let started = (self.factory)(spec)?;
        self.next_id += 1;
        let id = self.next_id;
        let done = started.running.done();
        ctx.spawn(
            done.into_actor(self)
                .map(move |outcome, act, ctx| act.backend_ended(id, &outcome, ctx)),
        );
        Ok(Backend {
            id,
            spec: spec.clone(),
            recipient: started.recipient,
            events: started.events,
            running: Some(started.running),
            in_flight: 0,
        })
    }

    fn backend_ended(&mut self, id: u64, outcome: &JoinOutcome, ctx: &mut Context<Self>) {
        self.retired.retain(|b| b.id != id);
        if self.active.as_ref().is_some_and(|b| b.id == id) {
            let spec = self
                .active
                .take()
                .map(|b| b.spec.to_string())
                .unwrap_or_default();
            self.env
                .fail(ctx, format!("runtime adapter {spec} ended: {outcome:?}"));
        }
    }

    pub(super) fn show_status(&self) {
        let Some(active) = &self.active else {
            return self.env.set_status("no runtime adapter in service");
        };
        let health = self.health.borrow();
        let mut status = format!("serving {}", active.spec);
        if health.reachable {
            status.push_str(&format!(" ({})", health.runtime_version));
        } else {
            status.push_str(&format!(" (unavailable: {})", health.message));
        }
        if let Some(cidr) = self.pod_cidr.handed() {
            status.push_str(&format!("; pod CIDR {cidr}"));
        }
        if let Some((_, spec)) = &self.candidate {
            status.push_str(&format!("; switching to {spec}"));
        }
        if let Some(error) = &self.swap_error {
            status.push_str(&format!("; last switch failed: {error}"));
        }
        self.env.set_status(status);
    }

    /// Reacts to a new configuration: starts a swap when it asks for another adapter.
    fn reconsider(&mut self, ctx: &mut Context<Self>) {
        let desired = self.desired();
        let in_service = self.active.as_ref().map(|b| &b.spec);
        if in_service == Some(&desired) {
            self.candidate = None;
            return self.show_status();
        }
        if self
            .candidate
            .as_ref()
            .is_some_and(|(_, spec)| *spec == desired)
        {
            return;
        }
        tracing::info!(to = %desired, "runtime adapter change requested");
        let backend = match self.launch(&desired, ctx) {
            Ok(backend) => backend,
            Err(reason) => return self.swap_failed(&desired, &reason.into()),
        };
        self.candidate = Some((backend.id, desired.clone()));
        self.show_status();
        let handshake = backend
            .recipient
            .send(RuntimeCall(cri::VersionRequest::default().into_request()));
        let timeout = desired.handshake_timeout();
        ctx.spawn(
            async move { tokio::time::timeout(timeout, handshake).await }
                .into_actor(self)
                .map(move |answer, act, ctx| {
                    let answered = match answer {
                        Ok(Ok(Ok(RuntimeResponse::Version(version)))) => Ok(version),
                        Ok(Ok(Ok(other))) => Err(SwapError::WrongAnswer(other.operation())),
                        Ok(Ok(Err(err))) => Err(SwapError::Refused(err)),
                        Ok(Err(_)) => Err(SwapError::Died),
                        Err(_) => Err(SwapError::NoAnswer(timeout)),
                    };
                    act.handshake_done(backend, answered, ctx);
                }),
        );
    }

    fn handshake_done(
        &mut self,
        mut backend: Backend,
        answered: Result<cri::VersionResponse, SwapError>,
        ctx: &mut Context<Self>,
    ) {
        let current = self
            .candidate
            .as_ref()
            .is_some_and(|(id, _)| *id == backend.id);
        match answered {
            Ok(version) if current => {
                self.candidate = None;
                self.swap_error = None;
                tracing::info!(to = %backend.spec, runtime = %version.runtime_name, "runtime adapter switched");
                if let Some(old) = self.active.take() {
                    set_info(&old.spec, false);
                    self.retire(old);
                }
                self.serve(backend);
                self.hand_pod_cidr(ctx);
                self.polls.poll_now(ctx);
            }
            Ok(_) => stop_backend(&mut backend),
            Err(reason) => {
                stop_backend(&mut backend);
                if current {
                    self.candidate = None;
                    self.swap_failed(&backend.spec, &reason);
                }
            }
        }
        self.show_status();
    }

    fn swap_failed(&mut self, spec: &AdapterSpec, reason: &SwapError) {
        let message = format!("cannot switch to {spec}: {reason}");
        tracing::error!("{message}; the runtime adapter in service stays");
        metrics::counter!("sergeant_runtime_adapter_swap_failures_total").increment(1);
        self.swap_error = Some(message);
        self.show_status();
    }

    /// Takes an adapter out of service; it is stopped once its last call is answered.
    fn retire(&mut self, mut old: Backend) {
        if old.in_flight == 0 {
            stop_backend(&mut old);
        } else {
            self.retired.push(old);
        }
    }

    fn call_finished(&mut self, id: u64) {
        if let Some(active) = self.active.as_mut().filter(|b| b.id == id) {
            active.in_flight -= 1;
            return;
        }
        if let Some(index) = self.retired.iter().position(|b| b.id == id) {
            self.retired[index].in_flight -= 1;
            if self.retired[index].in_flight == 0 {
                let mut old = self.retired.remove(index);
                stop_backend(&mut old);
            }
        }
    }
}

/// The limit on concurrent image pulls: one at a time with `serializeImagePulls` (the
/// default), else `maxParallelImagePulls`; none when that is unset. Read at start (changing it
/// needs a restart, as upstream).
fn pull_gate(config: &NodeConfig) -> Option<Arc<Semaphore>> {
    let kubelet = &config.kubelet;
    let limit = if kubelet.serialize_image_pulls {
        Some(1)
    } else {
        kubelet
            .max_parallel_image_pulls
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| *n > 0)
    };
    limit.map(|n| Arc::new(Semaphore::new(n)))
}

/// The pull rate limit: `registryPullQPS` pulls a second, `registryBurst` at once; none when
/// `registryPullQPS` is 0. Read at start (a change needs a restart, as upstream).
fn pull_rate(config: &NodeConfig) -> Option<TokenBucket> {
    let kubelet = &config.kubelet;
    let burst = u32::try_from(kubelet.registry_burst).unwrap_or(0);
    (kubelet.registry_pull_qps > 0)
        .then(|| TokenBucket::new(f64::from(kubelet.registry_pull_qps), burst, Instant::now()))
}

fn stop_backend(backend: &mut Backend) {
    if let Some(running) = backend.running.take() {
        actix_rt::spawn(running.stop(Duration::from_secs(5)));
    }
}

fn set_info(spec: &AdapterSpec, in_service: bool) {
    metrics::gauge!(
        "sergeant_runtime_adapter_info",
        "adapter" => spec.kind_name(),
        "endpoint" => spec.runtime_endpoint.to_string()
    )
    .set(if in_service { 1.0 } else { 0.0 });
}

/// The configuration changed; look whether the adapter must change.
#[derive(Debug, Clone, Copy)]
struct ConfigChanged;

impl Message for ConfigChanged {
    type Result = ();
}

impl Actor for RuntimeAdapter {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        metrics::describe_gauge!(
            "sergeant_runtime_adapter_info",
            "1 for the runtime adapter in service (by kind and endpoint), 0 for one swapped out."
        );
        metrics::describe_counter!(
            "sergeant_runtime_adapter_swap_failures_total",
            "Runtime adapter swaps abandoned because the new adapter did not answer its handshake."
        );
        metrics::describe_counter!(
            "sergeant_image_pulls_throttled_total",
            "Image pulls refused at once by registryPullQPS/registryBurst (pull QPS exceeded)."
        );
        self.pulls = pull_gate(&self.config.borrow().active);
        self.pull_rate = pull_rate(&self.config.borrow().active);
        self.pod_cidr = PodCidr::new(self.config.borrow().active.kubelet.pod_cidr.as_deref());
        let spec = self.desired();
        match self.launch(&spec, ctx) {
            Ok(backend) => self.serve(backend),
            Err(reason) => {
                return self.env.fail(
                    ctx,
                    format!("cannot start runtime adapter {spec}: {reason}"),
                )
            }
        }
        let mut changes = self.config.clone();
        let addr = ctx.address();
        ctx.spawn(
            async move {
                while changes.changed().await.is_ok() {
                    addr.do_send(ConfigChanged);
                }
            }
            .into_actor(self),
        );
        self.hand_pod_cidr(ctx);
        self.polls.poll_now(ctx);
        self.show_status();
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        for mut backend in self.active.take().into_iter().chain(self.retired.drain(..)) {
            set_info(&backend.spec, false);
            stop_backend(&mut backend);
        }
    }
}

impl Handler<ConfigChanged> for RuntimeAdapter {
    type Result = ();

    fn handle(&mut self, _: ConfigChanged, ctx: &mut Context<Self>) {
        let configured = self.config.borrow().active.kubelet.pod_cidr.clone();
        self.pod_cidr.configure(configured.as_deref());
        self.hand_pod_cidr(ctx);
        self.reconsider(ctx);
    }
}

impl Handler<RuntimeCall> for RuntimeAdapter {
    type Result = ResponseActFuture<Self, Result<RuntimeResponse, RuntimeError>>;

    fn handle(&mut self, call: RuntimeCall, _: &mut Context<Self>) -> Self::Result {
        let operation = call.0.operation();
        if let Err(fault) = failpoint::check("runtime-adapter::call") {
            let err = RuntimeError::Unavailable {
                operation,
                message: fault.to_string(),
            };
            return Box::pin(actix::fut::ready(Err(err)));
        }
        let pulling = matches!(call.0, RuntimeRequest::PullImage(_));
        if pulling
            && self
                .pull_rate
                .as_mut()
                .is_some_and(|rate| !rate.try_take(Instant::now()))
        {
            metrics::counter!("sergeant_image_pulls_throttled_total").increment(1);
            let err = RuntimeError::Other {
                operation,
                code: "ResourceExhausted".to_owned(),
                message: "pull QPS exceeded (registryPullQPS)".to_owned(),
            };
            return Box::pin(actix::fut::ready(Err(err)));
        }
        let Some(backend) = self.active.as_mut() else {
            let err = RuntimeError::Unavailable {
                operation,
                message: "no runtime adapter in service".to_owned(),
            };
            return Box::pin(actix::fut::ready(Err(err)));
        };
        backend.in_flight += 1;
        let id = backend.id;
        let recipient = backend.recipient.clone();
        let gate = pulling.then(|| self.pulls.clone()).flatten();
        let answer = async move {
            // Held until the pull is answered: at most the configured number pull at once.
            let _permit = match gate {
                Some(gate) => gate.acquire_owned().await.ok(),
                None => None,
            };
            recipient.send(call).await
        };
        Box::pin(answer.into_actor(self).map(move |answer, act, _| {
            act.call_finished(id);
            answer.unwrap_or_else(|_| {
                Err(RuntimeError::Unavailable {
                    operation,
                    message: "the runtime adapter died during the call".to_owned(),
                })
            })
        }))
    }
}

impl Handler<health::Poll> for RuntimeAdapter {
    type Result = ResponseActFuture<Self, ()>;

    fn handle(&mut self, _: health::Poll, _: &mut Context<Self>) -> Self::Result {
        let Some(backend) = &self.active else {
            return Box::pin(actix::fut::ready(()));
        };
        let spec = backend.spec.clone();
        let probe = health::probe(backend.recipient.clone(), spec);
        Box::pin(probe.into_actor(self).map(|health, act, ctx| {
            let reachable = health.reachable;
            act.health.send_replace(health);
            if reachable {
                act.hand_pod_cidr(ctx);
            }
            act.show_status();
            act.polls.schedule_next(ctx, reachable);
        }))
    }
}
