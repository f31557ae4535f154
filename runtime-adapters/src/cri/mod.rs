//! The CRI client layer: endpoints, the lazily connected channel, the instrumented client, and
//! its errors, and the adapter actor [`CriAdapter`] that answers the runtime port through it.

mod actor;
mod call;
mod client;
mod conditions;
mod connection;
mod error;
mod events;
pub mod metrics;

#[cfg(unix)]
mod endpoint_unix;
#[cfg(unix)]
use endpoint_unix as platform;

#[cfg(windows)]
mod endpoint_windows;
#[cfg(windows)]
use endpoint_windows as platform;

pub use actor::CriAdapter;
pub use client::{
    image_named, CriClient, CriClientConfig, Rpc, CHEAP_CALL_TIMEOUT, CRI_API_VERSION,
    DEFAULT_RUNTIME_REQUEST_TIMEOUT,
};
pub use conditions::{RuntimeConditions, NETWORK_READY, RUNTIME_READY};
pub use connection::{ConnectError, Connection, CONNECT_TIMEOUT};
pub use error::CriError;
pub use metrics::Operation;

/// The CRI v1 message types this client takes and returns, re-exported so callers need no
/// direct dependency on `k8s-cri`.
pub use k8s_cri::v1 as api;
