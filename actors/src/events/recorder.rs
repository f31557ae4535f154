//! The `event-recorder` actor (managed mode): reads the event queue, correlates each event
//! (rate limit, combine, count repeats) and writes it to the API server, one write at a time so
//! a slow API server fills the queue — and pod actors drop events — instead of piling up
//! requests. Its caches start empty after a restart, as upstream's do.

use std::time::Instant;

use actix::{
    Actor, ActorContext, ActorFutureExt, AsyncContext, Context, StreamHandler, WrapFuture,
};
use kube::Client;

use super::inbox::Inbox;
use super::write::{create, patch_repeat, EventWriteError};
use super::EVENTS_TOTAL;
use sergeant_core::events::correlate::{Correlator, Write};
use sergeant_core::events::object::{event, NewEvent};
use sergeant_core::events::Record;
use sergeant_supervisor::failpoint;
use sergeant_supervisor::ChildEnv;

/// Writes the events of the node's pods to the API server.
pub struct EventRecorder {
    env: ChildEnv,
    client: Client,
    node: String,
    inbox: Inbox,
    correlator: Correlator,
    written: u64,
}

impl EventRecorder {
    /// A recorder reading `inbox` and writing through `client` as the kubelet of `node`.
    #[must_use]
    pub fn new(env: &ChildEnv, client: Client, node: String, inbox: Inbox) -> Self {
        Self {
            env: env.clone(),
            client,
            node,
            inbox,
            correlator: Correlator::default(),
            written: 0,
        }
    }

    fn counted(&mut self, result: &'static str) {
        metrics::counter!(EVENTS_TOTAL, "result" => result).increment(1);
        if matches!(result, "created" | "patched") {
            self.written += 1;
            self.env
                .set_status(format!("{} events written", self.written));
        }
    }
}

impl Actor for EventRecorder {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        metrics::describe_counter!(
            EVENTS_TOTAL,
            "Events of the node's pods, by result: created, patched (a repeat), rate_limited, dropped (queue full), failed."
        );
        let Some(lease) = self.inbox.lease() else {
            return self
                .env
                .fail(ctx, "the event queue is held by another recorder");
        };
        ctx.add_stream(lease);
        self.env.set_status("no events written yet");
    }
}

impl StreamHandler<Record> for EventRecorder {
    fn handle(&mut self, record: Record, ctx: &mut Context<Self>) {
        if let Err(fault) = failpoint::check("event-recorder::record") {
            return self.env.fail(ctx, fault);
        }
        let (name, message, count, first) = match self.correlator.correlate(&record, Instant::now())
        {
            Write::Drop => return self.counted("rate_limited"),
            Write::Create { name, message } => (name, message, 1, record.at),
            Write::Patch {
                name,
                count,
                message,
                first,
            } => (name, message, count, first),
        };
        let new = NewEvent {
            record: &record,
            name: &name,
            message: &message,
            count,
            first,
        };
        let object = event(&new, &self.node);
        let client = self.client.clone();
        let work = async move {
            if count == 1 {
                return create(client, &object).await.map(|()| "created");
            }
            match patch_repeat(client.clone(), &object).await {
                Err(EventWriteError::Gone { .. }) => {
                    create(client, &object).await.map(|()| "created")
                }
                other => other.map(|()| "patched"),
            }
        };
        // One write at a time: the queue holds the rest.
        ctx.wait(
            work.into_actor(self)
                .map(move |result, act, _| match result {
                    Ok(done) => act.counted(done),
                    Err(error) => {
                        tracing::debug!("{error}");
                        act.correlator.forget(&record, &message);
                        act.counted("failed");
                    }
                }),
        );
    }

    fn finished(&mut self, ctx: &mut Context<Self>) {
        // Every sender is gone: nothing will come any more.
        ctx.stop();
    }
}
