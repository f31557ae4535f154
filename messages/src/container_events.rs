//! The container event stream of the runtime port: where a runtime streams CRI
//! `GetContainerEvents`, the PLEG reacts to changes as they happen instead of waiting for its
//! next relist.
//!
//! This is a subscription, not a request with one answer, so it is a message of its own rather
//! than a [`RuntimeCall`](crate::runtime::RuntimeCall): [`SubscribeContainerEvents`] hands back
//! a channel the adapter feeds until the stream ends. Runtimes without the call (containerd
//! 1.6) answer [`RuntimeError::Unimplemented`], and the subscriber relists instead.

use actix::Message;
use tokio::sync::mpsc;

use crate::runtime::cri;
use crate::runtime_error::RuntimeError;

/// The upstream `operation_type` of the subscription, used in its errors.
pub const OPERATION: &str = "get_container_events";

/// How many events a subscription buffers before the adapter waits for (or, when it cannot
/// wait, drops) its subscriber; upstream's PLEG channel holds as many.
pub const BUFFER: usize = 1000;

/// One item of a container event stream: an event, or the error that ended the stream. An
/// error is always the last item; a stream that closes without one was ended on purpose (the
/// adapter behind the port changed, or the subscriber fell too far behind) and may be
/// subscribed again at once.
pub type ContainerEventItem = Result<cri::ContainerEventResponse, RuntimeError>;

/// The receiving end of a container event subscription.
pub type ContainerEventStream = mpsc::Receiver<ContainerEventItem>;

/// Asks the runtime adapter for a stream of container events (CRI `GetContainerEvents`):
/// created, started, stopped and deleted containers and sandboxes, each with the status of its
/// pod sandbox and containers attached.
#[derive(Debug, Clone, Copy, Default)]
pub struct SubscribeContainerEvents;

impl Message for SubscribeContainerEvents {
    /// The stream, or why there is none: `Unimplemented` when the runtime cannot stream
    /// events at all, any other error when it could not be reached.
    type Result = Result<ContainerEventStream, RuntimeError>;
}

/// Resolves once a different adapter is in service behind the runtime port (a hot swap).
/// A subscriber that was answered `Unimplemented` waits for this before asking again, since
/// the same adapter would only refuse again.
#[derive(Debug, Clone, Copy, Default)]
pub struct WaitForAdapterSwap;

impl Message for WaitForAdapterSwap {
    type Result = ();
}
