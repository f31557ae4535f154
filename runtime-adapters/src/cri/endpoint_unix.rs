//! The unix side of reaching a CRI endpoint: unix domain sockets through tokio.
//!
//! Named pipes do not exist here, so an npipe endpoint is refused before any channel is built.

use std::io;
use std::path::PathBuf;

use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;

use sergeant_config::Endpoint;

use super::connection::ConnectError;

/// What the connector dials on this platform: a socket path.
pub(crate) type Target = PathBuf;

/// The byte stream handed to hyper for one connection.
pub(crate) type Transport = TokioIo<UnixStream>;

/// Checks that `endpoint` can be reached on this platform and returns what to dial.
///
/// # Errors
///
/// [`ConnectError::UnsupportedOnPlatform`] for a named pipe endpoint.
pub(crate) fn target(endpoint: &Endpoint) -> Result<Target, ConnectError> {
    match endpoint {
        Endpoint::Unix(path) => Ok(path.clone()),
        Endpoint::NamedPipe(_) => Err(ConnectError::UnsupportedOnPlatform {
            endpoint: endpoint.to_string(),
            reason: "named pipes (npipe://) exist only on Windows; use unix:///path/to/socket here",
        }),
    }
}

/// Opens one connection to the socket.
///
/// # Errors
///
/// The I/O error of `connect(2)`: typically `NotFound` (no socket file) or `ConnectionRefused`
/// (a socket file nobody listens on, e.g. after the runtime died).
pub(crate) async fn connect(target: &Target) -> io::Result<Transport> {
    UnixStream::connect(target).await.map(TokioIo::new)
}
