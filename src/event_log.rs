//! The Windows Event Log as a second destination of the log when the agent runs as a Windows
//! service (`event_log_windows.rs`): a service has no console, and operators look for its
//! warnings, errors and state changes in the Application log. Other systems have no Event Log
//! (`event_log_unix.rs`). Before logging is set up, [`report_error`] tells the Event Log why
//! the service could not start.

#[cfg(not(windows))]
#[path = "event_log_unix.rs"]
mod platform;
#[cfg(windows)]
#[path = "event_log_windows.rs"]
mod platform;

pub use platform::{layer, report_error};
