//! SIGTERM and SIGINT, the signals that stop the agent on unix.

use std::io;

use tokio::signal::unix::{signal, Signal, SignalKind};

/// The agent's stop signals, listened to from [`StopSignals::install`] on.
#[derive(Debug)]
pub struct StopSignals {
    terminate: Signal,
    interrupt: Signal,
}

impl StopSignals {
    /// Starts listening. Must be called inside a tokio runtime.
    ///
    /// # Errors
    /// When a signal handler cannot be installed.
    pub fn install() -> io::Result<Self> {
        Ok(Self {
            terminate: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
        })
    }

    /// Waits for the next stop signal and names it.
    pub async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.terminate.recv() => "SIGTERM",
            _ = self.interrupt.recv() => "SIGINT",
        }
    }
}
