//! Ctrl-C, Ctrl-Break and system shutdown, the console events that stop the agent on Windows.

use std::io;

use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_shutdown, CtrlBreak, CtrlC, CtrlShutdown};

/// The agent's stop events, listened to from [`StopSignals::install`] on.
#[derive(Debug)]
pub struct StopSignals {
    interrupt: CtrlC,
    brk: CtrlBreak,
    shutdown: CtrlShutdown,
}

impl StopSignals {
    /// Starts listening. Must be called inside a tokio runtime.
    ///
    /// # Errors
    /// When a console handler cannot be installed.
    pub fn install() -> io::Result<Self> {
        Ok(Self {
            interrupt: ctrl_c()?,
            brk: ctrl_break()?,
            shutdown: ctrl_shutdown()?,
        })
    }

    /// Waits for the next stop event and names it.
    pub async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.interrupt.recv() => "Ctrl-C",
            _ = self.brk.recv() => "Ctrl-Break",
            _ = self.shutdown.recv() => "system shutdown",
        }
    }
}
