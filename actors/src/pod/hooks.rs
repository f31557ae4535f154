//! Lifecycle hooks (postStart, preStop): exec in the container, HTTP GET against it, or sleep.

use std::time::Duration;

use sergeant_core::KUBERNETES_MINOR;
use sergeant_messages::pods::core::LifecycleHandler;
use sergeant_messages::runtime::cri;
use sergeant_messages::runtime_error::RuntimeError;
use sergeant_probes::http_get::{self, HttpGetError, HttpTarget, TargetError};

use super::target::ContainerTarget;
use crate::runtime::RuntimePort;

/// How long a postStart hook may run.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a lifecycle hook failed. Its Display is the message of the container's status
/// (`PostStartHookError`) and of the log; the variants tell the handler and the cause apart.
/// `Clone` and comparable, as the start's [`super::start::NotStarted`] that carries it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookError {
    /// The runtime could not run the exec handler's command.
    #[error("exec {command:?}: {source}")]
    Exec {
        /// The command.
        command: Vec<String>,
        /// The runtime's failure.
        source: RuntimeError,
    },
    /// The exec handler's command ran and exited with a status other than 0.
    #[error("exec {command:?} exited with {exit_code}: {stderr}")]
    Exited {
        /// The command.
        command: Vec<String>,
        /// Its exit status.
        exit_code: i32,
        /// What it wrote to stderr, trimmed: another program's words, opaque here.
        stderr: String,
    },
    /// The httpGet handler names no request that can be made (a bad port or scheme).
    #[error("httpGet: {0}")]
    HttpTarget(#[source] TargetError),
    /// The httpGet handler's request got no answer.
    #[error("httpGet: {0}")]
    HttpGet(#[source] HttpGetError),
    /// The hook has none of exec, httpGet and sleep.
    #[error("the hook has no handler")]
    NoHandler,
}

/// Runs `handler` for `target`, for at most `timeout`.
///
/// # Errors
/// [`HookError`]: why the hook failed.
pub async fn run(
    port: &RuntimePort,
    target: &ContainerTarget<'_>,
    handler: &LifecycleHandler,
    timeout: Duration,
) -> Result<(), HookError> {
    if let Some(exec) = &handler.exec {
        let cmd = exec.command.clone().unwrap_or_default();
        let answer = port
            .call(cri::ExecSyncRequest {
                container_id: target.container_id.to_owned(),
                cmd: cmd.clone(),
                timeout: i64::try_from(timeout.as_secs()).unwrap_or(i64::MAX),
            })
            .await
            .map_err(|source| HookError::Exec {
                command: cmd.clone(),
                source,
            })?;
        if answer.exit_code != 0 {
            return Err(HookError::Exited {
                command: cmd,
                exit_code: answer.exit_code,
                stderr: String::from_utf8_lossy(&answer.stderr).trim().to_owned(),
            });
        }
        return Ok(());
    }
    if let Some(sleep) = &handler.sleep {
        let secs = u64::try_from(sleep.seconds).unwrap_or(0);
        tokio::time::sleep(Duration::from_secs(secs).min(timeout)).await;
        return Ok(());
    }
    if let Some(action) = &handler.http_get {
        // As upstream, any HTTP answer completes the hook; only no answer fails it.
        let user_agent = format!("kube-lifecycle/{KUBERNETES_MINOR}");
        let request = HttpTarget::resolve(action, target.container, target.pod_ip, &user_agent)
            .map_err(HookError::HttpTarget)?;
        http_get::get(&request, timeout)
            .await
            .map_err(HookError::HttpGet)?;
        return Ok(());
    }
    Err(HookError::NoHandler)
}
