//! A gRPC health server (`grpc.health.v1.Health`) for the node environment's `grpc-health`
//! test image: grpc probes need a real server in a real container.
//!
//! Listens on `0.0.0.0:$PORT` (9090). The overall service `""` and `live` answer SERVING, `sick`
//! answers NOT_SERVING, and any other name is unknown (NOT_FOUND), as the protocol says.

use std::net::SocketAddr;

use tonic_health::ServingStatus;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port: u16 = std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(9090);
    let (reporter, service) = tonic_health::server::health_reporter();
    reporter
        .set_service_status("", ServingStatus::Serving)
        .await;
    reporter
        .set_service_status("live", ServingStatus::Serving)
        .await;
    reporter
        .set_service_status("sick", ServingStatus::NotServing)
        .await;
    let addr = SocketAddr::from(([0, 0, 0, 0], port));
    println!("grpc health server on {addr}");
    tonic::transport::Server::builder()
        .add_service(service)
        .serve(addr)
        .await?;
    Ok(())
}
