//! The probe worker (`<container>:<kind>` under its pod actor, supervised by the pod's probe
//! supervisor): runs one probe of one container instance on its period and tells the pod actor
//! when the verdict changes. A new incarnation starts with no verdict, as upstream's worker.

use std::time::{Instant, SystemTime};

use actix::{
    Actor, ActorContext, ActorFutureExt, AsyncContext, Context, Message, Recipient, WrapFuture,
};
use sergeant_messages::pods::core::{Container, Probe};
use sergeant_messages::pods::PodKey;
use sergeant_supervisor::{failpoint, ChildEnv};

use super::check::check;
use super::metrics;
use crate::events::{reason, EventType, PodEvents};
use crate::pod::target::ContainerTarget;
use crate::runtime::RuntimePort;
use sergeant_core::probe::{ProbeKind, ProbeSettings};
use sergeant_probes::Outcome;

/// A probe's verdict changed: sent to the pod actor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeResult {
    /// The container's name.
    pub container: String,
    /// The instance probed; a result for an older instance is stale.
    pub container_id: String,
    /// Which probe.
    pub kind: ProbeKind,
    /// The new verdict; `None` when the worker that reached the last one died, so there is no
    /// verdict until its successor's first (a readiness probe's container is not Ready).
    pub success: Option<bool>,
    /// The last attempt's output or reason (or why the worker died).
    pub message: String,
}

impl Message for ProbeResult {
    type Result = ();
}

/// What a worker probes and where it reports.
pub struct ProbeWorker {
    env: ChildEnv,
    kind: ProbeKind,
    probe: Probe,
    settings: ProbeSettings,
    pod: PodKey,
    container: Container,
    container_id: String,
    pod_ip: Option<String>,
    started_at: SystemTime,
    port: RuntimePort,
    report: Recipient<ProbeResult>,
    events: PodEvents,
    /// The current verdict, once one was reached.
    verdict: Option<bool>,
    /// The last attempt's result and how many in a row gave it.
    streak: Option<(bool, u32)>,
    /// Set after a liveness or startup failure (the container is about to be killed) and after
    /// a startup success (startup probes stop once passed).
    on_hold: bool,
    busy: bool,
}

/// The container instance a [`ProbeWorker`] checks.
#[derive(Clone)]
pub struct ProbedContainer {
    /// Its spec.
    pub spec: Container,
    /// Its runtime ID.
    pub id: String,
    /// The pod's IP.
    pub pod_ip: Option<String>,
    /// When it started, which the initial delay counts from.
    pub started_at: SystemTime,
}

/// One probe to run: what the probe supervisor makes each incarnation of a worker from.
#[derive(Clone)]
pub struct ProbeJob {
    /// Which probe.
    pub kind: ProbeKind,
    /// The probe's spec.
    pub probe: Probe,
    /// The pod.
    pub pod: PodKey,
    /// The container instance.
    pub container: ProbedContainer,
    /// The runtime, for exec probes.
    pub port: RuntimePort,
    /// Where verdict changes go (the pod actor).
    pub report: Recipient<ProbeResult>,
    /// Where failed attempts go, as `Unhealthy` events.
    pub events: PodEvents,
}

impl ProbeWorker {
    /// A worker at `env`'s place running `job`, with no verdict yet.
    #[must_use]
    pub fn new(env: &ChildEnv, job: ProbeJob) -> Self {
        Self {
            env: env.clone(),
            kind: job.kind,
            settings: ProbeSettings::of(&job.probe),
            probe: job.probe,
            pod: job.pod,
            container: job.container.spec,
            container_id: job.container.id,
            pod_ip: job.container.pod_ip,
            started_at: job.container.started_at,
            port: job.port,
            report: job.report,
            events: job.events,
            verdict: None,
            streak: None,
            on_hold: false,
            busy: false,
        }
    }

    fn tick(&mut self, ctx: &mut Context<Self>) {
        if !self.report.connected() {
            // The pod actor is gone; so is the reason to probe.
            return ctx.stop();
        }
        if self.busy || self.on_hold {
            return;
        }
        if let Err(fault) = failpoint::check_scoped(
            "probe::tick",
            format_args!("{}/{}", self.pod.namespace, self.pod.name),
        ) {
            return self.env.fail(ctx, fault);
        }
        self.busy = true;
        let (port, probe, container, id, pod_ip) = (
            self.port.clone(),
            self.probe.clone(),
            self.container.clone(),
            self.container_id.clone(),
            self.pod_ip.clone(),
        );
        let timeout = self.settings.timeout;
        let attempt = async move {
            let target = ContainerTarget {
                container_id: &id,
                container: &container,
                pod_ip: pod_ip.as_deref(),
            };
            let began = Instant::now();
            let outcome = check(&port, &probe, &target, timeout).await;
            (outcome, began.elapsed())
        };
        ctx.spawn(attempt.into_actor(self).map(|(outcome, took), act, _| {
            act.busy = false;
            metrics::record(act.kind, &act.pod, &act.container.name, &outcome, took);
            act.count(outcome);
        }));
    }

    /// Counts one attempt toward the thresholds and reports a changed verdict.
    fn count(&mut self, outcome: Outcome) {
        let (success, message) = match outcome {
            Outcome::Success(message) => (true, message),
            Outcome::Warning(message) => {
                let name = &self.container.name;
                let warning = format!("{} probe warning: {message}", self.kind.name());
                self.events
                    .container(name, EventType::Warning, reason::PROBE_WARNING, warning);
                (true, message)
            }
            Outcome::Failure(message) => {
                self.unhealthy(format!("{} probe failed: {message}", self.kind.name()));
                (false, message)
            }
            Outcome::Unknown(message) => {
                tracing::debug!(probe = %self.kind, "probe could not run: {message}");
                self.unhealthy(format!("{} probe errored: {message}", self.kind.name()));
                return;
            }
        };
        let run = match self.streak {
            Some((last, run)) if last == success => run + 1,
            _ => 1,
        };
        self.streak = Some((success, run));
        let needed = if success {
            self.settings.success_threshold
        } else {
            self.settings.failure_threshold
        };
        if run < needed || self.verdict == Some(success) {
            return;
        }
        if !success {
            tracing::info!(probe = %self.kind, "probe failed: {}", message.trim());
        }
        self.verdict = Some(success);
        self.on_hold = match self.kind {
            ProbeKind::Liveness => !success,
            ProbeKind::Startup => true,
            ProbeKind::Readiness => false,
        };
        self.report.do_send(ProbeResult {
            container: self.container.name.clone(),
            container_id: self.container_id.clone(),
            kind: self.kind,
            success: Some(success),
            message,
        });
    }

    /// An `Unhealthy` event about the probed container, for every failed attempt as upstream.
    fn unhealthy(&self, message: String) {
        let name = &self.container.name;
        self.events
            .container(name, EventType::Warning, reason::UNHEALTHY, message);
    }
}

impl Actor for ProbeWorker {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let since_start = SystemTime::now()
            .duration_since(self.started_at)
            .unwrap_or_default();
        let first = self.settings.initial_delay.saturating_sub(since_start);
        let period = self.settings.period;
        ctx.run_later(first, move |act, ctx| {
            act.tick(ctx);
            ctx.run_interval(period, |act, ctx| act.tick(ctx));
        });
    }
}
