//! The grpc probe handler: the standard health service (`grpc.health.v1.Health/Check`) over
//! plain HTTP/2, as upstream.

use std::time::Duration;

use k8s_openapi::api::core::v1::GRPCAction;
use tonic::transport::Endpoint;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;

use crate::http_get::authority;
use crate::Outcome;

/// Asks the health service of `action` (on the pod's IP, `pod_ip`) about the action's service
/// within `timeout`.
pub async fn probe(action: &GRPCAction, pod_ip: Option<&str>, timeout: Duration) -> Outcome {
    let (Some(host), Ok(port)) = (pod_ip, u16::try_from(action.port)) else {
        return Outcome::Unknown("no pod IP or no valid port for the gRPC probe".to_owned());
    };
    let service = action.service.as_deref().unwrap_or_default();
    check(&authority(host, port), service, timeout).await
}

/// Asks the health service at `authority` (`host:port`) about `service` within `timeout`.
async fn check(authority: &str, service: &str, timeout: Duration) -> Outcome {
    let Ok(endpoint) = Endpoint::from_shared(format!("http://{authority}")) else {
        return Outcome::Unknown(format!("{authority:?} is not a gRPC address"));
    };
    let endpoint = endpoint.connect_timeout(timeout).timeout(timeout);
    let asked = async {
        let channel = endpoint.connect().await.map_err(|e| {
            format!("failed to connect service {authority:?} within {timeout:?}: {e}")
        })?;
        HealthClient::new(channel)
            .check(HealthCheckRequest {
                service: service.to_owned(),
            })
            .await
            .map_err(|status| match status.code() {
                tonic::Code::Unimplemented => {
                    "this server does not implement the grpc health protocol (grpc.health.v1.Health)"
                        .to_owned()
                }
                tonic::Code::DeadlineExceeded => {
                    format!("health rpc did not complete within {timeout:?}")
                }
                _ => format!("health rpc probe failed: {}", status.message()),
            })
    };
    match tokio::time::timeout(timeout, asked).await {
        Err(_) => Outcome::Failure(format!("health rpc did not complete within {timeout:?}")),
        Ok(Err(message)) => Outcome::Failure(message),
        Ok(Ok(answer)) => {
            let status = answer.into_inner().status();
            if status == ServingStatus::Serving {
                Outcome::Success(String::new())
            } else {
                Outcome::Failure(format!(
                    "service unhealthy (responded with {:?})",
                    status.as_str_name()
                ))
            }
        }
    }
}
