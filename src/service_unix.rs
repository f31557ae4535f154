//! `--windows-service` on a build for another system: refused, with what to do instead.

use super::ServiceLink;

/// Why the agent does not run as a service here.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// Not a Windows build.
    #[error(
        "--windows-service: only the Windows build (sergeant.exe) runs as a Windows service; \
         here, run sergeant in the foreground under the init system (a systemd unit, say)"
    )]
    NotWindows,
}

/// Refuses: there is no Windows service control manager to run under.
///
/// # Errors
/// Always [`ServiceError::NotWindows`].
pub fn run_as_service(
    _agent: impl FnOnce(ServiceLink) -> u8 + Send + 'static,
) -> Result<u8, ServiceError> {
    Err(ServiceError::NotWindows)
}
