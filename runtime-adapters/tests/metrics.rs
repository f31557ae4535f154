//! Every CRI call shows up in the upstream runtime operation metrics.

mod common;

use metrics_exporter_prometheus::PrometheusBuilder;
use sergeant_runtime_adapters::cri::api::{ContainerStatusRequest, VersionRequest};
use sergeant_runtime_adapters::cri::metrics::describe;

fn sample(rendered: &str, series: &str) -> Option<f64> {
    rendered
        .lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
}

#[tokio::test]
async fn calls_and_errors_are_counted_and_timed_by_operation_type() {
    let handle = PrometheusBuilder::new()
        .install_recorder()
        .expect("recorder");
    describe();
    let client = common::client();

    client
        .call(VersionRequest::default())
        .await
        .expect("version");
    client
        .call(VersionRequest::default())
        .await
        .expect("version");
    let missing = common::unique("no-such-container");
    client
        .call(ContainerStatusRequest {
            container_id: missing,
            verbose: false,
        })
        .await
        .expect_err("not found");

    let rendered = handle.render();
    assert_eq!(
        sample(
            &rendered,
            r#"kubelet_runtime_operations_total{operation_type="version"}"#
        ),
        Some(2.0),
        "{rendered}"
    );
    assert_eq!(
        sample(
            &rendered,
            r#"kubelet_runtime_operations_total{operation_type="container_status"}"#
        ),
        Some(1.0),
        "{rendered}"
    );
    assert_eq!(
        sample(
            &rendered,
            r#"kubelet_runtime_operations_errors_total{operation_type="container_status"}"#
        ),
        Some(1.0),
        "{rendered}"
    );
    assert_eq!(
        sample(
            &rendered,
            r#"kubelet_runtime_operations_errors_total{operation_type="version"}"#
        ),
        None,
        "{rendered}"
    );
    assert!(
        sample(
            &rendered,
            r#"kubelet_runtime_operations_duration_seconds_count{operation_type="version"}"#
        ) == Some(2.0),
        "{rendered}"
    );
}
