//! A lazily connected gRPC channel to one CRI endpoint.
//!
//! The channel is built without touching the socket, so a runtime that is not up yet (or is
//! restarting) is not an error when the client is made: calls fail fast with `Unavailable`
//! while nothing listens, and the channel dials again on the next call once the runtime is back.

use std::sync::Arc;
use std::time::Duration;

use tonic::transport::{Channel, Uri};
use tower::service_fn;

use sergeant_config::Endpoint;

use super::platform;

/// How long one dial of the socket may take before the call fails with `Unavailable`.
///
/// A local socket either accepts at once or not at all; this only bounds a wedged runtime.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// The authority sent to the runtime. Runtimes on local sockets ignore it, but HTTP/2 needs one.
const AUTHORITY_URI: &str = "http://localhost";

/// Why a connection to an endpoint could not even be set up.
///
/// Exists to separate configuration problems (found at construction) from runtime failures
/// (which surface per call as [`super::CriError`]).
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The endpoint's kind does not exist on the platform this binary runs on.
    #[error("CRI endpoint {endpoint}: {reason}")]
    UnsupportedOnPlatform {
        /// The endpoint, as displayed.
        endpoint: String,
        /// Why it cannot be used here.
        reason: &'static str,
    },
    /// The channel needs a tokio runtime to run its connection task, and there is none.
    #[error("CRI endpoint {endpoint}: the client must be created inside a tokio runtime (an actix arbiter or #[tokio::main])")]
    NoRuntime {
        /// The endpoint being connected to.
        endpoint: String,
    },
}

/// One endpoint and the gRPC channel that reaches it.
///
/// Exists so the runtime and image services can share one channel when they share an endpoint,
/// and so the dialing details (platform transport, timeouts) live in one place. Cloning is cheap
/// and every clone uses the same underlying connection.
#[derive(Debug, Clone)]
pub struct Connection {
    endpoint: Endpoint,
    channel: Channel,
}

impl Connection {
    /// Builds a lazily connected channel to `endpoint`.
    ///
    /// Nothing is dialed here. The connection task of the channel is spawned on the current
    /// tokio runtime, which must outlive the connection.
    ///
    /// # Errors
    ///
    /// [`ConnectError::UnsupportedOnPlatform`] when the endpoint kind does not exist on this platform (an
    /// npipe endpoint on Linux), [`ConnectError::NoRuntime`] outside a tokio runtime.
    pub fn new(endpoint: &Endpoint) -> Result<Self, ConnectError> {
        let target = Arc::new(platform::target(endpoint)?);
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(ConnectError::NoRuntime {
                endpoint: endpoint.to_string(),
            });
        }
        let connector = service_fn(move |_: Uri| {
            let target = Arc::clone(&target);
            async move { platform::connect(&target).await }
        });
        let channel = tonic::transport::Endpoint::from_static(AUTHORITY_URI)
            .connect_timeout(CONNECT_TIMEOUT)
            .connect_with_connector_lazy(connector);
        Ok(Self {
            endpoint: endpoint.clone(),
            channel,
        })
    }

    /// The endpoint this connection dials.
    #[must_use]
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// A handle on the channel, for building gRPC service clients.
    #[must_use]
    pub fn channel(&self) -> Channel {
        self.channel.clone()
    }
}
