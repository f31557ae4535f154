//! A container that keeps crashing is restarted while the API server cannot be reached: what
//! its start needs from the API server — a config map for its environment and a volume, its
//! service-account token volume (a token and `kube-root-ca.crt`), and the services whose
//! variables it gets — comes from the watches and the token it holds, which keep what they saw, so
//! the sync never waits on the API server (issue 16: "a sync never waits on the API server to
//! restart a crashed container whose volumes are already set up"). Reading them at every sync
//! (the Get strategy, or listing services) would fail each restart with
//! `CreateContainerConfigError` until the API server returned. Once it is back, the watch
//! lists again and the syncs stop asking the API server for the config map.
//!
//! sergeant talks to the shared kube-apiserver through a TCP relay (`common::relay`) the test
//! cuts: every connection reset, every new one refused. Needs the control plane and containerd
//! `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR, SERGEANT_CRI_ENDPOINT).

mod common;

use std::time::Duration;

use common::cluster::Cluster;
use common::managed::Managed;
use common::node::{phase, SHELL};
use common::relay::Relay;
use common::runtime::Runtime;
use common::{wait_for, TestConfig};

/// How long two more restarts may take once the relay is cut: the container lives 2 s, the
/// crash-loop back-off is at most 4 s here, so two restarts take about 12 s; the rest is slack
/// for a loaded machine.
const RESTARTS_BOUND: Duration = Duration::from_secs(40);

/// The highest attempt among the containers the runtime holds for pod `uid` (dead ones are
/// collected, so their number does not grow with each restart).
fn attempt(runtime: &Runtime, uid: &str) -> u32 {
    runtime
        .containers(&[("io.kubernetes.pod.uid", uid)])
        .iter()
        .filter_map(|c| c.metadata.as_ref().map(|m| m.attempt))
        .max()
        .unwrap_or(0)
}

#[test]
fn a_crashing_container_restarts_while_the_api_server_is_unreachable() {
    let cluster = Cluster::from_env();
    let mut relay = Relay::to_apiserver(&cluster);
    let name = "offline-restart";
    let config = TestConfig::new()
        .kubelet("crashLoopBackOff:\n  maxContainerRestartPeriod: 4s\n")
        .sergeant("crashLoopBackOff:\n  initialPeriod: 1s\n");
    let node = Managed::start_via(&relay.url(), name, &[], config, &[]);
    cluster.fresh_config_map(name, false);
    let uid = node.create(
        name,
        &format!(
            "  containers:\n  - name: c\n    image: {SHELL}\n    command: [sh, -c, 'test \"$KEY\" = value && test -n \"$KUBERNETES_SERVICE_HOST\" && cat /cfg/key && sleep 2; exit 1']\n    env:\n    - name: KEY\n      valueFrom:\n        configMapKeyRef:\n          name: {name}\n          key: key\n    volumeMounts:\n    - name: cfg\n      mountPath: /cfg\n  volumes:\n  - name: cfg\n    configMap:\n      name: {name}\n"
        ),
    );
    node.wait_pod(name, "its container started", |p| phase(p) == "Running");
    let runtime = Runtime::connect();
    wait_for("a first restart", RESTARTS_BOUND, || {
        (attempt(&runtime, &uid) >= 1).then_some(())
    });

    relay.cut();
    let before = attempt(&runtime, &uid);
    let began = std::time::Instant::now();
    wait_for(
        "two restarts without the API server",
        RESTARTS_BOUND,
        || (attempt(&runtime, &uid) >= before + 2).then_some(()),
    );
    eprintln!(
        "two restarts without the API server in {:.1?}",
        began.elapsed()
    );
    // Back online, the watches list again (the test's config map, and kube-root-ca.crt of the
    // pod's service-account token volume), and the syncs of the restarts that follow read the
    // config maps from them instead of asking the API server.
    let lists = config_map_requests(&node, "list");
    relay.resume();
    wait_for("both config maps listed again", RESTARTS_BOUND, || {
        (config_map_requests(&node, "list") >= lists + 2.0).then_some(())
    });
    // A list is counted when it is sent; a sync between the request and its answer may still
    // read the API server. One restart later the watches have their lists in.
    let settled = attempt(&runtime, &uid) + 1;
    wait_for("one restart after the lists", RESTARTS_BOUND, || {
        (attempt(&runtime, &uid) >= settled).then_some(())
    });
    let (gets, before) = (config_map_requests(&node, "get"), attempt(&runtime, &uid));
    wait_for("two more restarts", RESTARTS_BOUND, || {
        (attempt(&runtime, &uid) >= before + 2).then_some(())
    });
    assert_eq!(
        config_map_requests(&node, "get"),
        gets,
        "syncs read the config map from its watch again"
    );
    cluster.kubectl(&["delete", "configmap", name, "-n", "default"]);
}

/// The node's requests with `verb` for config maps so far (sergeant's own count).
fn config_map_requests(node: &Managed, verb: &str) -> f64 {
    let (_, metrics) = node.agent.get("/metrics");
    let verb = format!("verb=\"{verb}\"");
    metrics
        .lines()
        .filter(|line| line.starts_with("sergeant_api_requests_total{"))
        .filter(|line| line.contains(&verb) && line.contains("resource=\"configmaps\""))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}
