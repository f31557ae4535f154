//! The typed handle every actor uses to call the runtime: it reaches the runtime-adapter actor
//! across its restarts (or, for the runtime-adapter's own health probe, one adapter directly)
//! and hands back the CRI response of each request.

use actix::Recipient;
use sergeant_messages::runtime::{RuntimeCall, RuntimeOperation};
use sergeant_messages::runtime_error::RuntimeError;

use super::adapter::RuntimeAdapter;
use crate::supervisor::ChildRef;

/// Where a port's calls go.
#[derive(Clone)]
enum Target {
    /// The runtime-adapter actor, whichever incarnation is current.
    Adapter(ChildRef<RuntimeAdapter>),
    /// One adapter, bypassing the runtime-adapter actor.
    Direct(Recipient<RuntimeCall>),
}

/// A caller's handle on the runtime port.
#[derive(Clone)]
pub struct RuntimePort {
    target: Target,
}

impl RuntimePort {
    /// A port reaching the runtime-adapter actor through `adapter`.
    #[must_use]
    pub fn new(adapter: ChildRef<RuntimeAdapter>) -> Self {
        Self {
            target: Target::Adapter(adapter),
        }
    }

    /// A port on one adapter; the runtime-adapter actor probes the adapters it runs with it.
    #[must_use]
    pub fn direct(adapter: Recipient<RuntimeCall>) -> Self {
        Self {
            target: Target::Direct(adapter),
        }
    }

    /// Sends `request` and waits for its answer.
    ///
    /// # Errors
    /// The runtime's [`RuntimeError`]; `Unavailable` when the adapter cannot be reached
    /// (restarting past the delivery timeout, down, or gone).
    pub async fn call<R: RuntimeOperation>(&self, request: R) -> Result<R::Response, RuntimeError> {
        let call = RuntimeCall(request.into_request());
        let answer = match &self.target {
            Target::Adapter(adapter) => adapter.send(call).await.map_err(|err| err.to_string()),
            Target::Direct(adapter) => adapter.send(call).await.map_err(|err| err.to_string()),
        };
        let answer = answer.map_err(|message| RuntimeError::Unavailable {
            operation: R::OPERATION,
            message,
        })??;
        R::from_response(answer)
    }
}
