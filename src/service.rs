//! `--windows-service`: the agent run by the Windows service control manager, which starts
//! it, asks it to stop, and is told how far it got (`service_windows.rs`). Elsewhere the flag
//! is refused (`service_unix.rs`). The agent itself only sees a [`ServiceLink`]: stop requests
//! to wait for and a [`ServiceReport`] to tell its progress to.

use std::time::Duration;

use tokio::sync::mpsc;

#[cfg(not(windows))]
#[path = "service_unix.rs"]
mod platform;
#[cfg(windows)]
#[path = "service_windows.rs"]
mod platform;

pub use platform::run_as_service;

/// Where the agent tells the service manager how far it got.
pub trait ServiceReport: Send {
    /// The supervision tree is up: the service is running and takes stop requests.
    fn running(&self);
    /// A stop was asked for: the tree is stopping, within `wait`.
    fn stopping(&self, wait: Duration);
}

/// The agent's side of the service manager, when it runs as a service.
#[cfg_attr(
    not(windows),
    allow(
        dead_code,
        reason = "only the Windows service builds one; elsewhere the flag is refused"
    )
)]
pub struct ServiceLink {
    /// Stop requests, each named (`service stop`, `system shutdown`).
    pub stop: mpsc::UnboundedReceiver<&'static str>,
    /// Where progress is reported.
    pub report: Box<dyn ServiceReport>,
}

/// Waits for the service manager to ask for a stop (forever when not a service), reports that
/// the stop takes up to `wait`, and names what asked.
pub async fn stop_requested(link: &mut Option<ServiceLink>, wait: Duration) -> &'static str {
    let Some(link) = link else {
        return std::future::pending().await;
    };
    // The handler lives as long as the process; a closed channel still means stop.
    let name = link
        .stop
        .recv()
        .await
        .unwrap_or("service control handler gone");
    link.report.stopping(wait);
    name
}
