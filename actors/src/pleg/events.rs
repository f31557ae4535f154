//! The evented half of the PLEG actor: subscribes to the runtime's container events through
//! the runtime port, turns each event of this node into an immediate relist (the relist and
//! its diff stay the one source of the PLEG's view), and falls back to relisting every second
//! when the runtime cannot stream, as `sergeant_core::pleg::subscription` decides.

use std::time::{SystemTime, UNIX_EPOCH};

use actix::{ActorFutureExt, AsyncContext, Context, WrapFuture};
use sergeant_messages::container_events::ContainerEventStream;
use sergeant_messages::runtime::cri;
use sergeant_messages::runtime_error::RuntimeError;

use super::actor::Pleg;
use sergeant_core::pleg::subscription::{concerns_node, Next, Refusal};

/// Subscriptions opened (upstream's name).
const CONNECTION_SUCCESS: &str = "kubelet_evented_pleg_connection_success_count";
/// Subscriptions refused or broken by an error (upstream's name).
const CONNECTION_ERROR: &str = "kubelet_evented_pleg_connection_error_count";
/// From an event's creation in the runtime to its arrival (upstream's name).
const CONNECTION_LATENCY: &str = "kubelet_evented_pleg_connection_latency_seconds";
/// The relist period in force: 1 s, or 300 s while events stream.
const RELIST_PERIOD_GAUGE: &str = "sergeant_pleg_relist_period_seconds";

/// Registers the help texts of the evented PLEG metrics.
pub(super) fn describe_metrics() {
    metrics::describe_counter!(
        CONNECTION_SUCCESS,
        "The number of times a streaming client was obtained to receive CRI Events."
    );
    metrics::describe_counter!(
        CONNECTION_ERROR,
        "The number of errors encountered during the establishment of streaming connection with the CRI runtime."
    );
    metrics::describe_histogram!(
        CONNECTION_LATENCY,
        metrics::Unit::Seconds,
        "The latency of streaming connection with the CRI runtime, measured in seconds."
    );
    metrics::describe_gauge!(
        RELIST_PERIOD_GAUGE,
        metrics::Unit::Seconds,
        "The PLEG relist period in force: 1 s, or 300 s while container events stream."
    );
}

/// What `error` means for the subscription: a runtime that answers `Unimplemented` streams no
/// events; anything else is a failure to retry.
fn refusal(error: &RuntimeError) -> Refusal {
    match error {
        RuntimeError::Unimplemented { .. } => Refusal::Unsupported,
        _ => Refusal::Failed,
    }
}

impl Pleg {
    /// Asks the runtime port for container events.
    pub(super) fn subscribe(&mut self, ctx: &mut Context<Self>) {
        self.show_mode();
        let port = self.port.clone();
        ctx.spawn(
            async move { port.container_events().await }
                .into_actor(self)
                .map(|answer, act, ctx| match answer {
                    Ok(stream) => {
                        metrics::counter!(CONNECTION_SUCCESS).increment(1);
                        act.subscription.connected();
                        tracing::debug!("container events stream; relisting only as a safety net");
                        act.show_mode();
                        // Whatever happened before the stream opened, a relist sees.
                        act.refresh(ctx);
                        act.read(stream, ctx);
                    }
                    Err(error) => {
                        metrics::counter!(CONNECTION_ERROR).increment(1);
                        let next = act.subscription.refused(refusal(&error));
                        act.follow(next, Some(&error), ctx);
                    }
                }),
        );
    }

    /// Waits for the next item of `stream`.
    fn read(&mut self, mut stream: ContainerEventStream, ctx: &mut Context<Self>) {
        ctx.spawn(
            async move { (stream.recv().await, stream) }
                .into_actor(self)
                .map(|(item, stream), act, ctx| match item {
                    Some(Ok(event)) => {
                        act.on_event(&event, ctx);
                        act.read(stream, ctx);
                    }
                    Some(Err(error)) => {
                        metrics::counter!(CONNECTION_ERROR).increment(1);
                        let next = act.subscription.ended(Some(refusal(&error)));
                        act.follow(next, Some(&error), ctx);
                    }
                    None => {
                        let next = act.subscription.ended(None);
                        act.follow(next, None, ctx);
                    }
                }),
        );
    }

    fn on_event(&mut self, event: &cri::ContainerEventResponse, ctx: &mut Context<Self>) {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos());
        let created = u128::try_from(event.created_at).unwrap_or(0);
        let latency = now.saturating_sub(created) as f64 / 1e9;
        metrics::histogram!(CONNECTION_LATENCY).record(latency);
        if concerns_node(event, &self.node) {
            self.refresh(ctx);
        }
    }

    /// Acts on what the subscription decided after a refusal or the end of a stream.
    fn follow(&mut self, next: Next, error: Option<&RuntimeError>, ctx: &mut Context<Self>) {
        self.show_mode();
        let why = error.map_or_else(|| "ended".to_owned(), ToString::to_string);
        match next {
            Next::Resubscribe => {
                tracing::debug!("container event stream ended; subscribing again");
                self.subscribe(ctx);
            }
            Next::AwaitSwap { log } => {
                if log {
                    tracing::debug!(
                        "the runtime streams no container events ({why}); relisting every second"
                    );
                }
                let port = self.port.clone();
                ctx.spawn(
                    async move { port.adapter_swapped().await }
                        .into_actor(self)
                        .map(|(), act, ctx| act.subscribe(ctx)),
                );
            }
            Next::Retry { delay, warn } => {
                if warn {
                    tracing::warn!(
                        "container event stream failed ({why}); relisting every second, subscribing again with back-off"
                    );
                } else {
                    tracing::debug!(
                        "container event stream failed again ({why}); next try in {delay:?}"
                    );
                }
                ctx.run_later(delay, |act, ctx| act.subscribe(ctx));
            }
        }
    }

    /// Shows the mode in the actor's status and in the relist period gauge.
    fn show_mode(&self) {
        metrics::gauge!(RELIST_PERIOD_GAUGE).set(self.subscription.relist_period().as_secs_f64());
        self.env.set_status(self.subscription.describe());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unimplemented_means_the_runtime_streams_no_events() {
        let (operation, message) = ("get_container_events", String::from("x"));
        let unimplemented = RuntimeError::Unimplemented {
            operation,
            message: message.clone(),
        };
        let unavailable = RuntimeError::Unavailable { operation, message };
        assert_eq!(refusal(&unimplemented), Refusal::Unsupported);
        assert_eq!(refusal(&unavailable), Refusal::Failed);
    }
}
