//! [`FakeAdapter`]: the runtime-adapter actor backed by a [`FakeRuntime`].

use std::time::Instant;

use actix::{Actor, Context, Handler};
use sergeant_messages::runtime::{RuntimeCall, RuntimeRequest, RuntimeResponse};
use sergeant_messages::runtime_error::RuntimeError;

use super::FakeRuntime;
use crate::cri::metrics::{
    OPERATIONS_DURATION_SECONDS, OPERATIONS_ERRORS_TOTAL, OPERATIONS_TOTAL, OPERATION_TYPE_LABEL,
};

/// The fake runtime adapter: answers every [`RuntimeCall`] from the in-memory
/// [`FakeRuntime`] it owns, counted in the upstream `kubelet_runtime_operations_*` metrics
/// like the CRI adapter's calls.
///
/// Its state lives and dies with it: a restarted fake adapter is a freshly booted runtime.
#[derive(Debug)]
pub struct FakeAdapter {
    runtime: FakeRuntime,
}

impl FakeAdapter {
    /// An adapter serving `runtime`.
    #[must_use]
    pub fn new(runtime: FakeRuntime) -> Self {
        Self { runtime }
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
        answer
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
