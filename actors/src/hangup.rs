//! [`Hangups`]: the operator's "re-read the configuration now" signal, where the platform has
//! one: SIGHUP on unix (`hangup_unix.rs`); Windows has none (`hangup_windows.rs`), and the
//! configuration is re-read on its poll interval alone.

#[cfg(unix)]
#[path = "hangup_unix.rs"]
mod platform;
#[cfg(windows)]
#[path = "hangup_windows.rs"]
mod platform;

pub use platform::Hangups;
