//! SIGHUP, the signal that asks for the configuration to be re-read on unix.

use std::io;

use tokio::signal::unix::{signal, Signal, SignalKind};

/// SIGHUPs received from [`Hangups::listen`] on.
#[derive(Debug)]
pub struct Hangups(Signal);

impl Hangups {
    /// Starts listening. Must be called inside a tokio runtime.
    ///
    /// # Errors
    /// When the signal handler cannot be installed.
    pub fn listen() -> io::Result<Self> {
        signal(SignalKind::hangup()).map(Self)
    }

    /// Waits for the next SIGHUP; `None` when no more can come.
    pub async fn recv(&mut self) -> Option<()> {
        self.0.recv().await
    }
}
