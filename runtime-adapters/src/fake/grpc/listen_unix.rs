//! Where the fake CRI server listens on unix: a unix domain socket, bound fresh.

use sergeant_config::Endpoint;
use tokio::net::UnixListener;
use tokio_stream::wrappers::UnixListenerStream;

use super::ServeError;

/// The connections to a socket, as they arrive.
pub(super) type Incoming = UnixListenerStream;

/// The connections to the socket of `endpoint`.
///
/// # Errors
/// [`ServeError::UnsupportedOnPlatform`] for a named pipe, [`ServeError::Listen`] when the
/// socket cannot be bound (a file is in the way, the directory is missing).
pub(super) fn incoming(endpoint: &Endpoint) -> Result<Incoming, ServeError> {
    let Endpoint::Unix(path) = endpoint else {
        return Err(ServeError::UnsupportedOnPlatform {
            endpoint: endpoint.to_string(),
            reason: "named pipes exist only on Windows; serve on unix:///path/to/socket here",
        });
    };
    let listener = UnixListener::bind(path).map_err(|source| ServeError::Listen {
        endpoint: endpoint.to_string(),
        source,
    })?;
    Ok(UnixListenerStream::new(listener))
}
