//! The typed handle every actor uses to call the runtime: it reaches the runtime-adapter actor
//! across its restarts and hands back the CRI response of each request.

use sergeant_messages::runtime::{RuntimeCall, RuntimeOperation};
use sergeant_messages::runtime_error::RuntimeError;

use super::adapter::RuntimeAdapter;
use crate::supervisor::{ChildRef, SendError};

/// A caller's handle on the runtime port.
#[derive(Clone)]
pub struct RuntimePort {
    adapter: ChildRef<RuntimeAdapter>,
}

impl RuntimePort {
    /// A port reaching the runtime-adapter actor through `adapter`.
    #[must_use]
    pub fn new(adapter: ChildRef<RuntimeAdapter>) -> Self {
        Self { adapter }
    }

    /// Sends `request` and waits for its answer.
    ///
    /// # Errors
    /// The runtime's [`RuntimeError`]; `Unavailable` when the runtime-adapter actor cannot be
    /// reached (restarting past the delivery timeout, or down).
    pub async fn call<R: RuntimeOperation>(&self, request: R) -> Result<R::Response, RuntimeError> {
        let answer = self
            .adapter
            .send(RuntimeCall(request.into_request()))
            .await
            .map_err(|err: SendError| RuntimeError::Unavailable {
                operation: R::OPERATION,
                message: err.to_string(),
            })??;
        R::from_response(answer)
    }
}
