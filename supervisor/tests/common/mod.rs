//! What the actor tests share: running a test on an actix system, waiting for a condition
//! with a deadline, and the metrics recorder of the test binary.
#![allow(dead_code)] // each test binary uses its own part

use std::future::Future;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

/// Runs `test` to completion on a fresh actix system.
pub fn run<F: Future<Output = ()>>(test: F) {
    actix_rt::System::new().block_on(test);
}

/// Polls `probe` every 10 ms until it returns true, failing the test after `deadline`.
pub async fn wait_for<F, Fut>(what: &str, deadline: Duration, mut probe: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let start = Instant::now();
    while !probe().await {
        assert!(
            start.elapsed() < deadline,
            "timed out after {deadline:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The test binary's metrics recorder, installed on first use.
pub fn metrics_handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        PrometheusBuilder::new()
            .install_recorder()
            .expect("recorder installs")
    })
}
