//! The Windows side of reaching a CRI endpoint: named pipes through tokio.
//!
//! Unix sockets are not used by CRI runtimes on Windows, so a unix endpoint is refused before
//! any channel is built.

use std::io;
use std::time::Duration;

use hyper_util::rt::TokioIo;
use tokio::net::windows::named_pipe::{ClientOptions, NamedPipeClient};

use sergeant_config::Endpoint;

use super::connection::ConnectError;

/// `ERROR_PIPE_BUSY`: every instance of the pipe is taken; the server opens another shortly.
const ERROR_PIPE_BUSY: i32 = 231;
/// How many times a busy pipe is retried before giving up on this connection attempt.
const BUSY_RETRIES: u32 = 50;
/// Pause between two attempts on a busy pipe.
const BUSY_PAUSE: Duration = Duration::from_millis(20);

/// What the connector dials on this platform: a full pipe path (`\\.\pipe\NAME`).
pub(crate) type Target = String;

/// The byte stream handed to hyper for one connection.
pub(crate) type Transport = TokioIo<NamedPipeClient>;

/// Checks that `endpoint` can be reached on this platform and returns what to dial.
///
/// # Errors
///
/// [`ConnectError::UnsupportedOnPlatform`] for a unix socket endpoint.
pub(crate) fn target(endpoint: &Endpoint) -> Result<Target, ConnectError> {
    match endpoint {
        Endpoint::NamedPipe(pipe) => Ok(pipe.clone()),
        Endpoint::Unix(_) => Err(ConnectError::UnsupportedOnPlatform {
            endpoint: endpoint.to_string(),
            reason: "CRI runtimes on Windows listen on named pipes; use npipe://./pipe/NAME",
        }),
    }
}

/// Opens one connection to the pipe, waiting briefly while all its instances are busy.
///
/// # Errors
///
/// The I/O error of opening the pipe (`NotFound` when no runtime serves it).
pub(crate) async fn connect(target: &Target) -> io::Result<Transport> {
    let mut attempt = 0;
    loop {
        match ClientOptions::new().open(target) {
            Ok(client) => return Ok(TokioIo::new(client)),
            Err(e) if e.raw_os_error() == Some(ERROR_PIPE_BUSY) && attempt < BUSY_RETRIES => {
                attempt += 1;
                tokio::time::sleep(BUSY_PAUSE).await;
            }
            Err(e) => return Err(e),
        }
    }
}
