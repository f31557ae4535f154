//! [`StopSignals`]: what asks the agent to stop in order, per platform: SIGTERM and SIGINT on
//! unix (`stop_signal_unix.rs`), Ctrl-C, Ctrl-Break and system shutdown on Windows
//! (`stop_signal_windows.rs`).

#[cfg(unix)]
#[path = "stop_signal_unix.rs"]
mod platform;
#[cfg(windows)]
#[path = "stop_signal_windows.rs"]
mod platform;

pub use platform::StopSignals;
