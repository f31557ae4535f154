//! `kubeAPIQPS`/`kubeAPIBurst` limit the API client as client-go's token bucket: with 2
//! requests a second and a burst of 1, a node that registers, watches its pods and reports a
//! pod's start waits for its turn (upstream's `rest_client_rate_limiter_duration_seconds`),
//! and the pod still starts, since heartbeats (lease, Node) are never held back.

mod common;

use common::managed::{sleeper, Managed};
use common::node::phase;
use common::{wait_for, TestConfig};
use std::time::Duration;

/// The seconds the API client's requests waited for the rate limit, all verbs together.
fn waited(node: &Managed) -> f64 {
    let (_, metrics) = node.agent.get("/metrics");
    metrics
        .lines()
        .filter(|line| line.starts_with("rest_client_rate_limiter_duration_seconds_sum"))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[test]
fn a_low_kube_api_qps_makes_requests_wait_and_the_node_still_works() {
    let config = TestConfig::new().kubelet("kubeAPIQPS: 2\nkubeAPIBurst: 1\n");
    let node = Managed::start_with("pods-apiqps", &[], config, &[]);
    node.create("limited", &sleeper());
    node.wait_pod("limited", "Running", |p| phase(p) == "Running");
    // Startup alone (pod list and watch, status writes, events) is several requests: past the
    // burst of 1, each waits half a second behind the one before.
    let total = wait_for(
        "a second of waiting for the rate limit",
        Duration::from_secs(30),
        || {
            let total = waited(&node);
            (total >= 1.0).then_some(total)
        },
    );
    eprintln!("waited for the API rate limit: {total:.2} s");
}
