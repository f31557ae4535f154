//! [`FakeAdapter`]: the runtime-adapter actor backed by a [`FakeRuntime`].

use std::time::Instant;

use actix::{Actor, Context, Handler};
use sergeant_messages::container_events::{ContainerEventStream, SubscribeContainerEvents};
use sergeant_messages::runtime::{RuntimeCall, RuntimeRequest, RuntimeResponse};
use sergeant_messages::runtime_error::RuntimeError;

use super::subscribers::Subscribers;
use super::FakeRuntime;
use crate::cri::metrics::{
    OPERATIONS_DURATION_SECONDS, OPERATIONS_ERRORS_TOTAL, OPERATIONS_TOTAL, OPERATION_TYPE_LABEL,
};

/// The fake runtime adapter: answers every [`RuntimeCall`] from the in-memory
/// [`FakeRuntime`] it owns, counted in the upstream `kubelet_runtime_operations_*` metrics
/// like the CRI adapter's calls.
///
/// It streams the container events of its state changes to whoever subscribes
/// ([`SubscribeContainerEvents`]). Its state lives and dies with it: a restarted fake adapter
/// is a freshly booted runtime, and its event streams end with it.
#[derive(Debug)]
pub struct FakeAdapter {
    runtime: FakeRuntime,
    subscribers: Subscribers,
}

impl FakeAdapter {
    /// An adapter serving `runtime`.
    #[must_use]
    pub fn new(runtime: FakeRuntime) -> Self {
        Self {
            runtime,
            subscribers: Subscribers::default(),
        }
    }
}

impl Actor for FakeAdapter {
    type Context = Context<Self>;
}

impl Handler<RuntimeCall> for FakeAdapter {
    type Result = Result<RuntimeResponse, RuntimeError>;

    fn handle(&mut self, RuntimeCall(request): RuntimeCall, _: &mut Context<Self>) -> Self::Result {
        let operation = request.operation();
        let started = Instant::now();
        let answer = serve(&mut self.runtime, request);
        let label = [(OPERATION_TYPE_LABEL, operation)];
        metrics::counter!(OPERATIONS_TOTAL, &label).increment(1);
        metrics::histogram!(OPERATIONS_DURATION_SECONDS, &label)
            .record(started.elapsed().as_secs_f64());
        if answer.is_err() {
            metrics::counter!(OPERATIONS_ERRORS_TOTAL, &label).increment(1);
        }
        if !self.subscribers.is_empty() {
            self.subscribers.publish(self.runtime.take_events());
            self.runtime.record_events(!self.subscribers.is_empty());
        }
        answer
    }
}

impl Handler<SubscribeContainerEvents> for FakeAdapter {
    type Result = Result<ContainerEventStream, RuntimeError>;

    fn handle(&mut self, _: SubscribeContainerEvents, _: &mut Context<Self>) -> Self::Result {
        self.runtime.record_events(true);
        Ok(self.subscribers.add())
    }
}

/// Answers `request` from `runtime`, unless the `fake::call` failpoint fails it.
fn serve(
    runtime: &mut FakeRuntime,
    request: RuntimeRequest,
) -> Result<RuntimeResponse, RuntimeError> {
    fail::fail_point!("fake::call", |message: Option<String>| {
        Err(RuntimeError::Unavailable {
            operation: request.operation(),
            message: message.unwrap_or_else(|| "injected by failpoint fake::call".to_string()),
        })
    });
    runtime.call(request)
}
