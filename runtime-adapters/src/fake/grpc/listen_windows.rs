//! Where the fake CRI server listens on Windows: a named pipe, one instance per connection.
//!
//! A named pipe instance serves one client. The next instance is created as soon as one is
//! taken, before the connection is handed to the server, so a client never finds the pipe
//! missing between two connections (at most busy, which the CRI client waits out).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use sergeant_config::Endpoint;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::windows::named_pipe::{NamedPipeServer, ServerOptions};
use tonic::transport::server::Connected;

use super::ServeError;

/// One client's connection to the pipe.
#[derive(Debug)]
pub(super) struct PipeConnection(NamedPipeServer);

impl Connected for PipeConnection {
    type ConnectInfo = ();

    fn connect_info(&self) -> Self::ConnectInfo {}
}

impl AsyncRead for PipeConnection {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for PipeConnection {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

/// The connections to a pipe, as they arrive.
pub(super) type Incoming = Pin<Box<dyn Stream<Item = io::Result<PipeConnection>> + Send>>;

/// The connections to the pipe of `endpoint`.
///
/// # Errors
/// [`ServeError::UnsupportedOnPlatform`] for a unix socket, [`ServeError::Listen`] when the
/// pipe cannot be created (another server owns the name). When a later instance cannot be
/// created, the stream yields that error after the last connection, and ends.
pub(super) fn incoming(endpoint: &Endpoint) -> Result<Incoming, ServeError> {
    let Endpoint::NamedPipe(pipe) = endpoint else {
        return Err(ServeError::UnsupportedOnPlatform {
            endpoint: endpoint.to_string(),
            reason: "Windows runtimes listen on named pipes; serve on npipe://./pipe/NAME",
        });
    };
    let first = ServerOptions::new()
        .first_pipe_instance(true)
        .create(pipe)
        .map_err(|source| ServeError::Listen {
            endpoint: endpoint.to_string(),
            source,
        })?;
    let pipe = pipe.clone();
    Ok(Box::pin(futures::stream::unfold(
        Next::Instance(first),
        move |next| {
            let pipe = pipe.clone();
            async move {
                let mut instance = match next {
                    Next::Instance(instance) => instance,
                    Next::Failed(error) => return Some((Err(error), Next::Done)),
                    Next::Done => return None,
                };
                loop {
                    if instance.connect().await.is_ok() {
                        let next = ServerOptions::new()
                            .create(&pipe)
                            .map_or_else(Next::Failed, Next::Instance);
                        return Some((Ok(PipeConnection(instance)), next));
                    }
                    // The client left before it was served: offer a fresh instance instead.
                    instance = match ServerOptions::new().create(&pipe) {
                        Ok(fresh) => fresh,
                        Err(error) => return Some((Err(error), Next::Done)),
                    };
                }
            }
        },
    )))
}

/// What the connection stream does next.
enum Next {
    /// Waits for a client on this instance.
    Instance(NamedPipeServer),
    /// Reports why no further instance could be created, then ends.
    Failed(io::Error),
    /// Has ended.
    Done,
}
