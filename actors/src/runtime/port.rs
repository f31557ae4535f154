//! The typed handle every actor uses to call the runtime: it reaches the runtime-adapter actor
//! across its restarts (or, for the runtime-adapter's own health probe, one adapter directly)
//! and hands back the CRI response of each request, or a container event stream.

use actix::Recipient;
use sergeant_messages::container_events::{
    ContainerEventStream, SubscribeContainerEvents, WaitForAdapterSwap, OPERATION,
};
use sergeant_messages::pod_cidr::NodePodCidrs;
use sergeant_messages::runtime::{RuntimeCall, RuntimeOperation};
use sergeant_messages::runtime_error::RuntimeError;

use super::adapter::RuntimeAdapter;
use super::runtime_time::InFlight;
use sergeant_supervisor::ChildRef;

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
        let _in_flight = InFlight::enter();
        self.send(request).await
    }

    async fn send<R: RuntimeOperation>(&self, request: R) -> Result<R::Response, RuntimeError> {
        let call = RuntimeCall(request.into_request());
        let answer = match &self.target {
            Target::Adapter(adapter) => adapter
                .send(call)
                .await
                .map_err(|err| unreachable_adapter(R::OPERATION, &err))?,
            Target::Direct(adapter) => adapter
                .send(call)
                .await
                .map_err(|err| unreachable_adapter(R::OPERATION, &err))?,
        }?;
        R::from_response(answer)
    }

    /// Tells the runtime-adapter actor the Node's `spec.podCIDRs`, for it to hand them to the
    /// runtime when the runtime does not have them yet. Nothing waits: when the actor is
    /// restarting, the next status round tells it again; a port on one adapter drops it.
    pub fn node_pod_cidrs(&self, cidrs: Vec<String>) {
        if let Target::Adapter(adapter) = &self.target {
            if let Err(err) = adapter.tell(NodePodCidrs(cidrs)) {
                tracing::debug!("pod CIDRs not passed on this round: {err}");
            }
        }
    }

    /// Subscribes to the container events of the adapter in service. The stream ends with
    /// an error item when the runtime breaks it, and without one when the adapter is swapped
    /// out: subscribe again then.
    ///
    /// # Errors
    /// `Unimplemented` when the adapter (or its runtime) streams no events: wait for
    /// [`RuntimePort::adapter_swapped`] before asking again. `Unavailable` when the adapter
    /// cannot be reached, and a port on one adapter carries no event stream.
    pub async fn container_events(&self) -> Result<ContainerEventStream, RuntimeError> {
        let unavailable = |message: String| RuntimeError::Unavailable {
            operation: OPERATION,
            message,
        };
        match &self.target {
            Target::Adapter(adapter) => adapter
                .send(SubscribeContainerEvents)
                .await
                .map_err(|err| unavailable(err.to_string()))?,
            Target::Direct(_) => Err(unavailable(
                "a port on one adapter carries no event stream".to_owned(),
            )),
        }
    }

    /// Resolves once another adapter is in service than the one that last answered a
    /// subscription `Unimplemented` (at once if that happened already). Also resolves when
    /// the runtime-adapter actor cannot be reached, and at once on a port on one adapter:
    /// the next subscription then fails as `Unavailable`, which is retried with back-off.
    pub async fn adapter_swapped(&self) {
        if let Target::Adapter(adapter) = &self.target {
            // Unreachable: the subscriber finds out on its next subscription.
            let _ = adapter.send(WaitForAdapterSwap).await;
        }
    }
}

/// The runtime's error for a call whose adapter could not be reached: `Unavailable`, with the
/// delivery's failure as its message (the runtime error carries text).
fn unreachable_adapter(operation: &'static str, error: &dyn std::fmt::Display) -> RuntimeError {
    RuntimeError::Unavailable {
        operation,
        message: error.to_string(),
    }
}
