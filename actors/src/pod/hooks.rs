//! Lifecycle hooks (postStart, preStop): exec in the container, HTTP GET against it, or sleep.

use std::time::Duration;

use sergeant_core::KUBERNETES_MINOR;
use sergeant_messages::pods::core::LifecycleHandler;
use sergeant_messages::runtime::cri;
use sergeant_probes::http_get::{self, HttpTarget};

use super::target::ContainerTarget;
use crate::runtime::RuntimePort;

/// How long a postStart hook may run.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs `handler` for `target`, for at most `timeout`.
///
/// # Errors
/// Why the hook failed, in words for the container's status and events.
pub async fn run(
    port: &RuntimePort,
    target: &ContainerTarget<'_>,
    handler: &LifecycleHandler,
    timeout: Duration,
) -> Result<(), String> {
    if let Some(exec) = &handler.exec {
        let cmd = exec.command.clone().unwrap_or_default();
        let answer = port
            .call(cri::ExecSyncRequest {
                container_id: target.container_id.to_owned(),
                cmd: cmd.clone(),
                timeout: i64::try_from(timeout.as_secs()).unwrap_or(i64::MAX),
            })
            .await
            .map_err(|e| format!("exec {cmd:?}: {e}"))?;
        if answer.exit_code != 0 {
            return Err(format!(
                "exec {cmd:?} exited with {}: {}",
                answer.exit_code,
                String::from_utf8_lossy(&answer.stderr).trim()
            ));
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
            .map_err(|e| format!("httpGet: {e}"))?;
        http_get::get(&request, timeout)
            .await
            .map_err(|e| format!("httpGet: {e}"))?;
        return Ok(());
    }
    Err("the hook has no handler".to_owned())
}
