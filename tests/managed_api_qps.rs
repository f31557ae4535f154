//! `kubeAPIQPS`/`kubeAPIBurst` limit the API client as client-go's token bucket: with 2
//! requests a second and a burst of 1, a node that registers, watches its pods and reports a
//! pod's start waits for its turn (upstream's `rest_client_rate_limiter_duration_seconds`),
//! and the pod still starts, since heartbeats (lease, Node) are never held back. Idle pods
//! mounting one config map cost no config map reads under the Watch strategy (one watch, dropped
//! with the last pod using it), while under Get every resync reads it, and under Cache as often as
//! the Node's TTL annotation says (`sergeant_api_requests_total`).

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

/// Idle pods that mount the same config map (and, like every test pod, their service-account
/// token with `kube-root-ca.crt`), for the request-count measurements.
const IDLE_PODS: usize = 5;

/// A pod spec (for [`Managed::create`]) running `sleep` with config map `config_map` mounted.
fn mounting(config_map: &str) -> String {
    format!(
        "{}    volumeMounts:\n    - name: cfg\n      mountPath: /cfg\n  volumes:\n  - name: cfg\n    configMap:\n      name: {config_map}\n",
        sleeper()
    )
}

/// The sum of the metric lines of `name` whose labels contain every one of `labels`.
fn metric_sum(node: &Managed, name: &str, labels: &[&str]) -> f64 {
    let (_, metrics) = node.agent.get("/metrics");
    metrics
        .lines()
        .filter(|line| {
            line.starts_with(&format!("{name}{{")) || line.starts_with(&format!("{name} "))
        })
        .filter(|line| labels.iter().all(|label| line.contains(label)))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// The node's get and list requests for config maps so far (sergeant's own count).
fn config_map_reads(node: &Managed) -> f64 {
    ["verb=\"get\"", "verb=\"list\""]
        .iter()
        .map(|verb| {
            metric_sum(
                node,
                "sergeant_api_requests_total",
                &[verb, "resource=\"configmaps\""],
            )
        })
        .sum()
}

/// The watches of config maps running on the node.
fn config_map_watches(node: &Managed) -> f64 {
    metric_sum(node, "sergeant_object_watches", &["kind=\"configmap\""])
}

/// What [`measure`] measured.
struct Measured {
    /// The node, its pods still running.
    node: Managed,
    /// Its config map reads.
    reads: f64,
    /// All its API requests.
    requests: f64,
    /// Over this many seconds.
    seconds: f64,
}

/// Starts [`IDLE_PODS`] pods on a node `name` with `strategy`, all mounting one config map,
/// waits until they run, and measures the node's config map reads and all its API requests
/// over the next `rounds` resyncs of each pod.
fn measure(name: &str, strategy: &str, rounds: usize) -> Measured {
    // Resyncs are what is counted: 10 s apart, several fit in the wait.
    let config = TestConfig::new().kubelet(&format!(
        "configMapAndSecretChangeDetectionStrategy: {strategy}\nsyncFrequency: 10s\n"
    ));
    let node = Managed::start_with(name, &[], config, &[]);
    node.cluster.fresh_config_map(name, false);
    for i in 0..IDLE_PODS {
        node.create(&format!("{name}-{i}"), &mounting(name));
    }
    for i in 0..IDLE_PODS {
        node.wait_pod(&format!("{name}-{i}"), "Running", |p| phase(p) == "Running");
    }
    let resyncs = |node: &Managed| node.metric("sergeant_pod_resyncs_total ").unwrap_or(0.0);
    let requests = metric_sum(&node, "sergeant_api_requests_total", &[]);
    let (reads, synced, began) = (
        config_map_reads(&node),
        resyncs(&node),
        std::time::Instant::now(),
    );
    let wanted = synced + (IDLE_PODS * rounds) as f64;
    wait_for(
        &format!("{rounds} resyncs of each pod"),
        Duration::from_secs(60),
        || (resyncs(&node) >= wanted).then_some(()),
    );
    Measured {
        reads: config_map_reads(&node) - reads,
        requests: metric_sum(&node, "sergeant_api_requests_total", &[]) - requests,
        seconds: began.elapsed().as_secs_f64(),
        node,
    }
}

#[test]
fn idle_pods_cost_no_config_map_reads_under_watch_and_the_watch_goes_with_the_last_pod() {
    let name = "qps-watch";
    let Measured {
        node,
        reads,
        requests,
        seconds,
    } = measure(name, "Watch", 2);
    let watches = config_map_watches(&node);
    eprintln!(
        "Watch: {IDLE_PODS} idle pods mounting one config map, {seconds:.1} s of resyncs: {reads} config map reads, {watches} watch; {requests} API requests in all ({:.2}/s)",
        requests / seconds
    );
    assert_eq!(
        reads, 0.0,
        "resyncs read the config map from the API server"
    );
    // Every pod also mounts `kube-root-ca.crt` (its service-account token volume).
    assert_eq!(
        watches, 2.0,
        "one watch per config map in use: the test's and kube-root-ca.crt"
    );
    for i in 1..IDLE_PODS {
        node.cluster.kubectl(&[
            "delete",
            "pod",
            &format!("{name}-{i}"),
            "-n",
            "default",
            "--wait=false",
        ]);
    }
    wait_for("the other pods to be gone", Duration::from_secs(60), || {
        let (_, out) = node.cluster.kubectl(&[
            "get",
            "pods",
            "-n",
            "default",
            "-l",
            &format!("sergeant-test={name}"),
            "-o",
            "name",
        ]);
        (out.lines().count() == 1).then_some(())
    });
    assert_eq!(
        config_map_watches(&node),
        2.0,
        "the last pod still uses both config maps"
    );
    node.cluster.kubectl(&[
        "delete",
        "pod",
        &format!("{name}-0"),
        "-n",
        "default",
        "--wait=false",
    ]);
    wait_for(
        "the watches to be dropped with the last pod using the config maps",
        Duration::from_secs(60),
        || (config_map_watches(&node) == 0.0).then_some(()),
    );
    node.cluster
        .kubectl(&["delete", "configmap", name, "-n", "default"]);
}

#[test]
fn under_get_every_resync_reads_the_config_map() {
    let name = "qps-get";
    let Measured {
        node,
        reads,
        requests,
        seconds,
    } = measure(name, "Get", 2);
    eprintln!(
        "Get: {IDLE_PODS} idle pods mounting one config map, {seconds:.1} s of resyncs: {reads} config map reads ({:.2}/s); {requests} API requests in all ({:.2}/s)",
        reads / seconds,
        requests / seconds
    );
    assert!(
        reads >= (IDLE_PODS * 2) as f64,
        "each resync of each pod reads the config map: {reads}"
    );
    assert_eq!(config_map_watches(&node), 0.0, "Get starts no watch");
    node.cluster
        .kubectl(&["delete", "configmap", name, "-n", "default"]);
}

#[test]
fn an_immutable_config_map_is_not_watched_once_seen() {
    let name = "qps-immutable";
    let config = TestConfig::new().kubelet("syncFrequency: 10s\n");
    let node = Managed::start_with(name, &[], config, &[]);
    node.cluster.fresh_config_map(name, true);
    node.create(name, &mounting(name));
    node.wait_pod(name, "Running", |p| phase(p) == "Running");
    // The pod's service-account token volume mounts `kube-root-ca.crt`, which is mutable and
    // stays watched: the immutable config map's watch ends, that one remains.
    wait_for(
        "the watch of the immutable config map to end",
        Duration::from_secs(30),
        || (config_map_watches(&node) == 1.0).then_some(()),
    );
    let (_, metrics) = node.agent.get("/metrics");
    assert!(
        metrics.contains("sergeant_object_watches{kind=\"configmap\"}"),
        "a watch was started (and ended) for the config map"
    );
    let resyncs = |node: &Managed| node.metric("sergeant_pod_resyncs_total ").unwrap_or(0.0);
    let (reads, wanted) = (config_map_reads(&node), resyncs(&node) + 2.0);
    wait_for("two resyncs", Duration::from_secs(60), || {
        (resyncs(&node) >= wanted).then_some(())
    });
    assert_eq!(
        config_map_reads(&node) - reads,
        0.0,
        "the resyncs answer from what the ended watch saw"
    );
    node.cluster
        .kubectl(&["delete", "configmap", name, "-n", "default"]);
}

/// The control plane's TTL controller annotates small clusters' Nodes with
/// `node.alpha.kubernetes.io/ttl: 0`: under Cache a read is then good for no time, and each
/// resync reads the config map again, as upstream. Without the annotation the default minute
/// would answer a whole measurement from one read.
#[test]
fn under_cache_the_nodes_ttl_annotation_decides_how_long_a_read_is_good() {
    let name = "qps-cache";
    let Measured {
        node,
        reads,
        requests,
        seconds,
    } = measure(name, "Cache", 2);
    let ttl = node.cluster.get_json(&["node", name]).and_then(|n| {
        n["metadata"]["annotations"]["node.alpha.kubernetes.io/ttl"]
            .as_str()
            .map(str::to_owned)
    });
    eprintln!(
        "Cache (node TTL annotation {ttl:?}): {IDLE_PODS} idle pods mounting one config map, {seconds:.1} s of resyncs: {reads} config map reads; {requests} API requests in all"
    );
    assert_eq!(ttl.as_deref(), Some("0"), "the TTL controller's annotation");
    assert!(
        reads >= IDLE_PODS as f64,
        "with a TTL of 0 a round of resyncs reads the config map for each pod: {reads}"
    );
    assert_eq!(config_map_watches(&node), 0.0, "Cache starts no watch");
    node.cluster
        .kubectl(&["delete", "configmap", name, "-n", "default"]);
}
