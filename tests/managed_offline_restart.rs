//! A container that keeps crashing is restarted while the API server cannot be reached: what
//! its start needs from the API server — a config map for its environment and a volume, and
//! the services whose variables it gets — comes from the watches, which keep what they saw, so
//! the sync never waits on the API server (issue 16: "a sync never waits on the API server to
//! restart a crashed container whose volumes are already set up"). Reading them at every sync
//! (the Get strategy, or listing services) would fail each restart with
//! `CreateContainerConfigError` until the API server returned.
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
    relay.resume();
    cluster.kubectl(&["delete", "configmap", name, "-n", "default"]);
}
