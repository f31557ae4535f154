//! One probe attempt, whatever its handler: exec through the runtime, HTTP GET, TCP connect or
//! the gRPC health service.

use std::time::Duration;

use sergeant_messages::pods::core::Probe;
use sergeant_messages::runtime::cri;
use sergeant_messages::runtime_error::RuntimeError;
use sergeant_messages::KUBERNETES_MINOR;
use tokio::net::TcpStream;

use super::grpc;
use crate::pod::http_get::{self, authority, resolve_port, HttpTarget};
use crate::pod::target::ContainerTarget;
use crate::runtime::RuntimePort;

/// The target of a probe: the container it checks.
pub type ProbeTarget<'a> = ContainerTarget<'a>;

/// What one attempt found; each carries the output or reason, for logs and events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The check passed.
    Success(String),
    /// The check ran and failed.
    Failure(String),
    /// The check could not run (the runtime was away, a named port is missing); as upstream,
    /// such an attempt does not count either way.
    Unknown(String),
}

impl Outcome {
    /// The `result` label of `prober_probe_total`.
    #[must_use]
    pub const fn label(&self) -> &'static str {
        match self {
            Self::Success(_) => "successful",
            Self::Failure(_) => "failed",
            Self::Unknown(_) => "unknown",
        }
    }
}

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
        let request =
            match HttpTarget::resolve(action, target.container, target.pod_ip, &user_agent) {
                Ok(request) => request,
                Err(e) => return Outcome::Unknown(e.to_string()),
            };
        return match http_get::get(&request, timeout).await {
            Err(e) => Outcome::Failure(e.to_string()),
            Ok(answer) if answer.redirect_not_followed.is_some() => {
                Outcome::Success("Probe terminated redirects".to_owned())
            }
            Ok(answer) if (200..400).contains(&answer.status) => Outcome::Success(answer.body),
            Ok(answer) => Outcome::Failure(format!(
                "HTTP probe failed with statuscode: {}",
                answer.status
            )),
        };
    }
    if let Some(tcp) = &probe.tcp_socket {
        let host = tcp
            .host
            .as_deref()
            .filter(|h| !h.is_empty())
            .or(target.pod_ip);
        return match (host, resolve_port(&tcp.port, target.container)) {
            (None, _) => Outcome::Unknown("the pod has no IP yet".to_owned()),
            (_, Err(e)) => Outcome::Unknown(format!("port {e}")),
            (Some(host), Ok(port)) => tcp_check(host, port, timeout).await,
        };
    }
    if let Some(action) = &probe.grpc {
        let (Some(host), Ok(port)) = (target.pod_ip, u16::try_from(action.port)) else {
            return Outcome::Unknown("no pod IP or no valid port for the gRPC probe".to_owned());
        };
        let service = action.service.clone().unwrap_or_default();
        return grpc::check(&authority(host, port), &service, timeout).await;
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

async fn tcp_check(host: &str, port: u16, timeout: Duration) -> Outcome {
    let address = authority(host, port);
    match tokio::time::timeout(timeout, TcpStream::connect((host, port))).await {
        Ok(Ok(_)) => Outcome::Success(String::new()),
        Ok(Err(e)) => Outcome::Failure(format!("dial tcp {address}: {e}")),
        Err(_) => Outcome::Failure(format!("dial tcp {address}: i/o timeout")),
    }
}
