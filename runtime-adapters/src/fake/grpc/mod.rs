//! The fake runtime served as a CRI gRPC server: a [`Listener`] puts a [`FakeAdapter`] behind the
//! CRI `RuntimeService` and `ImageService` on a unix socket or, on Windows, a named pipe.
//!
//! Why it exists: on Windows there is no containerd to run a node against in CI, yet the CRI
//! client's named-pipe transport, the gRPC framing and the whole pod path above it must be run
//! for real. Served this way, the fake answers over the same wire protocol containerd speaks,
//! so `sergeant.exe` with its ordinary CRI adapter runs static pods against it under Wine. The
//! `sergeant-fake-cri` binary is the entry point an operator or a test starts.

mod record;
mod service;
mod status;

#[cfg(unix)]
mod listen_unix;
#[cfg(unix)]
use listen_unix as platform;

#[cfg(windows)]
mod listen_windows;
#[cfg(windows)]
use listen_windows as platform;

use std::future::Future;
use std::io;

use actix::Addr;
use k8s_cri::v1::image_service_server::ImageServiceServer;
use k8s_cri::v1::runtime_service_server::RuntimeServiceServer;
use sergeant_config::Endpoint;

pub use record::{Recorder, RECORDED};
pub use service::FakeCriService;

use super::FakeAdapter;

/// Why the fake CRI server could not serve.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The endpoint's kind does not exist on this platform (a named pipe on Linux, a unix
    /// socket on Windows).
    #[error("fake CRI server on {endpoint}: {reason}")]
    UnsupportedOnPlatform {
        /// The endpoint, as displayed.
        endpoint: String,
        /// Why it cannot be served here.
        reason: &'static str,
    },
    /// The socket or pipe could not be created (in use, no permission, no directory).
    #[error("fake CRI server on {endpoint}: cannot listen: {source}")]
    Listen {
        /// The endpoint, as displayed.
        endpoint: String,
        /// What the system said.
        source: io::Error,
    },
    /// The gRPC server stopped with an error.
    #[error("fake CRI server on {endpoint}: {source}")]
    Transport {
        /// The endpoint, as displayed.
        endpoint: String,
        /// What the server said.
        source: tonic::transport::Error,
    },
}

/// A bound socket or pipe, ready to serve the fake runtime.
///
/// Exists so a caller can tell (and say) when the endpoint accepts connections before it
/// starts serving: binding is synchronous, serving runs until shutdown.
pub struct Listener {
    endpoint: Endpoint,
    incoming: platform::Incoming,
    recorder: Option<Recorder>,
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listener")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl Listener {
    /// Creates the socket or pipe of `endpoint`. Must be called inside a tokio runtime.
    ///
    /// # Errors
    /// [`ServeError::UnsupportedOnPlatform`] for an endpoint kind this platform lacks,
    /// [`ServeError::Listen`] when the socket or pipe cannot be created.
    pub fn bind(endpoint: &Endpoint) -> Result<Self, ServeError> {
        Ok(Self {
            endpoint: endpoint.clone(),
            incoming: platform::incoming(endpoint)?,
            recorder: None,
        })
    }

    /// The same listener, its server recording the requests [`Recorder`] keeps.
    #[must_use]
    pub fn recording(self, recorder: Recorder) -> Self {
        Self {
            recorder: Some(recorder),
            ..self
        }
    }

    /// Serves `adapter` as a CRI runtime and image service until `shutdown` resolves. Must
    /// run inside the actix system that runs `adapter`.
    ///
    /// # Errors
    /// [`ServeError::Transport`] when the server fails.
    pub async fn serve(
        self,
        adapter: Addr<FakeAdapter>,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), ServeError> {
        let mut service = FakeCriService::new(adapter);
        if let Some(recorder) = self.recorder {
            service = service.recording(recorder);
        }
        let endpoint = self.endpoint;
        tonic::transport::Server::builder()
            .add_service(RuntimeServiceServer::new(service.clone()))
            .add_service(ImageServiceServer::new(service))
            .serve_with_incoming_shutdown(self.incoming, shutdown)
            .await
            .map_err(|source| ServeError::Transport {
                endpoint: endpoint.to_string(),
                source,
            })
    }
}
