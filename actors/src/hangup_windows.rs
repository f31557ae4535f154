//! Windows has no hangup signal: listening for one fails with that reason.

use std::io;

/// Never built: there is no hangup signal to receive on Windows.
#[derive(Debug)]
pub struct Hangups(());

impl Hangups {
    /// Refuses.
    ///
    /// # Errors
    /// Always: Windows has no SIGHUP.
    pub fn listen() -> io::Result<Self> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "Windows has no SIGHUP; the configuration is re-read on its poll interval",
        ))
    }

    /// Never yields.
    pub async fn recv(&mut self) -> Option<()> {
        None
    }
}
