//! The tcpSocket probe handler: a TCP connect to the container within the probe's timeout, as
//! upstream (the connection is closed at once; connecting is the check).

use std::time::Duration;

use k8s_openapi::api::core::v1::{Container, TCPSocketAction};
use tokio::net::TcpStream;

use crate::http_get::{authority, resolve_port};
use crate::Outcome;

/// Connects to the host of `action` (the pod's IP, `pod_ip`, unless it names one) on its port
/// (by number, or by the name of one of `container`'s ports) within `timeout`.
pub async fn probe(
    action: &TCPSocketAction,
    container: &Container,
    pod_ip: Option<&str>,
    timeout: Duration,
) -> Outcome {
    let host = action.host.as_deref().filter(|h| !h.is_empty()).or(pod_ip);
    match (host, resolve_port(&action.port, container)) {
        (None, _) => Outcome::Unknown("the pod has no IP yet".to_owned()),
        (_, Err(e)) => Outcome::Unknown(format!("port {e}")),
        (Some(host), Ok(port)) => connect(host, port, timeout).await,
    }
}

async fn connect(host: &str, port: u16, timeout: Duration) -> Outcome {
    let address = authority(host, port);
    match tokio::time::timeout(timeout, TcpStream::connect((host, port))).await {
        Ok(Ok(_)) => Outcome::Success(String::new()),
        Ok(Err(e)) => Outcome::Failure(format!("dial tcp {address}: {e}")),
        Err(_) => Outcome::Failure(format!("dial tcp {address}: i/o timeout")),
    }
}
