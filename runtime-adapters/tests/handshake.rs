//! The first things a kubelet asks a runtime: who are you, are you ready, can you stream events.

mod common;

use std::time::{Duration, Instant};

use sergeant_config::Endpoint;
use sergeant_runtime_adapters::cri::api::{GetEventsRequest, StatusRequest, VersionRequest};
use sergeant_runtime_adapters::cri::{ConnectError, CriClient, CriError, RuntimeConditions};

#[tokio::test]
async fn version_names_containerd_and_cri_v1() {
    let client = common::client();
    let version = client
        .call(VersionRequest::default())
        .await
        .expect("version");
    assert_eq!(version.runtime_name, "containerd", "{version:?}");
    assert_eq!(version.runtime_api_version, "v1", "{version:?}");
    assert!(!version.runtime_version.is_empty(), "{version:?}");
}

#[tokio::test]
async fn status_reports_runtime_and_network_ready() {
    let client = common::client();
    let status = client
        .call(StatusRequest { verbose: false })
        .await
        .expect("status");
    let conditions = RuntimeConditions::from_status(&status);
    assert!(conditions.is_runtime_ready(), "{conditions:?}");
    assert!(conditions.is_network_ready(), "{conditions:?}");
}

#[tokio::test]
async fn container_events_are_unimplemented_on_containerd_1_6() {
    let client = common::client();
    match client.call(GetEventsRequest {}).await {
        Err(CriError::Unimplemented { operation, .. }) => {
            assert_eq!(operation, "get_container_events");
        }
        Err(other) => panic!("expected Unimplemented, got {other}"),
        Ok(_) => panic!("expected Unimplemented, got a stream (containerd >= 1.7?)"),
    }
}

#[tokio::test]
async fn a_missing_socket_is_unavailable_fast_not_a_construction_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let endpoint =
        Endpoint::parse(&format!("unix://{}/none.sock", dir.path().display())).expect("endpoint");
    let client = CriClient::for_endpoint(endpoint).expect("lazy client");
    let started = Instant::now();
    let err = client
        .call(VersionRequest::default())
        .await
        .expect_err("nothing listens");
    assert!(
        matches!(
            err,
            CriError::Unavailable {
                operation: "version",
                ..
            }
        ),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
    assert!(err.message().contains("No such file"), "{err}");
}

#[tokio::test]
async fn npipe_endpoints_are_refused_on_linux() {
    let endpoint = Endpoint::parse("npipe://./pipe/containerd-containerd").expect("parses");
    let err = CriClient::for_endpoint(endpoint).expect_err("refused");
    assert!(
        matches!(err, ConnectError::UnsupportedOnPlatform { .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("npipe://./pipe/containerd-containerd"),
        "{err}"
    );
}

#[test]
fn a_client_outside_a_tokio_runtime_is_an_error_not_a_panic() {
    let err = CriClient::for_endpoint(common::endpoint()).expect_err("no runtime");
    assert!(matches!(err, ConnectError::NoRuntime { .. }), "{err}");
}
