//! One probe attempt, whatever its handler: exec through the runtime here; HTTP GET, TCP
//! connect and the gRPC health service through `sergeant_probes`.

use std::time::Duration;

use sergeant_core::KUBERNETES_MINOR;
use sergeant_messages::pods::core::Probe;
use sergeant_messages::runtime::cri;
use sergeant_messages::runtime_error::RuntimeError;
use sergeant_probes::{grpc, http_get, tcp, Outcome};

use crate::pod::target::ContainerTarget;
use crate::runtime::RuntimePort;

/// The target of a probe: the container it checks.
pub type ProbeTarget<'a> = ContainerTarget<'a>;

/// Runs `probe` once against `target`, for at most `timeout`.
pub async fn check(
    port: &RuntimePort,
    probe: &Probe,
    target: &ProbeTarget<'_>,
    timeout: Duration,
) -> Outcome {
    if let Some(exec) = &probe.exec {
        return exec_check(
            port,
            exec.command.clone().unwrap_or_default(),
            target,
            timeout,
        )
        .await;
    }
    if let Some(action) = &probe.http_get {
        let user_agent = format!("kube-probe/{KUBERNETES_MINOR}");
        return http_get::probe(
            action,
            target.container,
            target.pod_ip,
            &user_agent,
            timeout,
        )
        .await;
    }
    if let Some(action) = &probe.tcp_socket {
        return tcp::probe(action, target.container, target.pod_ip, timeout).await;
    }
    if let Some(action) = &probe.grpc {
        return grpc::probe(action, target.pod_ip, timeout).await;
    }
    Outcome::Unknown("the probe has no handler".to_owned())
}

async fn exec_check(
    port: &RuntimePort,
    cmd: Vec<String>,
    target: &ProbeTarget<'_>,
    timeout: Duration,
) -> Outcome {
    let request = cri::ExecSyncRequest {
        container_id: target.container_id.to_owned(),
        cmd,
        timeout: i64::try_from(timeout.as_secs()).unwrap_or(i64::MAX),
    };
    match port.call(request).await {
        Ok(answer) => {
            let mut output = String::from_utf8_lossy(&answer.stdout).into_owned();
            output.push_str(&String::from_utf8_lossy(&answer.stderr));
            if answer.exit_code == 0 {
                Outcome::Success(output)
            } else {
                Outcome::Failure(format!(
                    "command exited with {}: {}",
                    answer.exit_code,
                    output.trim()
                ))
            }
        }
        Err(RuntimeError::DeadlineExceeded { .. }) => {
            Outcome::Failure(format!("command timed out after {timeout:?}"))
        }
        Err(e) => Outcome::Unknown(e.to_string()),
    }
}
