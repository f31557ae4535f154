//! Managed mode through a real kube-apiserver outage: the API server sergeant talks to is
//! stopped for a minute and started again. Meanwhile the pods keep running and sergeant stays
//! healthy. Afterwards a pod bound to the node runs within seconds of the API server's return
//! (the pod watch resumed promptly), the Node is Ready with fresh heartbeats, the lease is
//! renewed, and no container and no actor was restarted.
//!
//! The shared API server of the test run stays up for the other tests. This test runs a second
//! real kube-apiserver of the same control plane (same binary, etcd and PKI, started by
//! `tests/control-plane/apiserver.sh`) on a port of its own, points sergeant at it, and stops
//! only that one. The test itself reads through the shared API server, so it can watch the
//! node while sergeant's server is down. The shared controller-manager sees the lease go stale
//! and may mark the Node Unknown during the outage, as it would in a real cluster.
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT).

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::apiserver::PrivateApiserver;
use common::cluster::Cluster;
use common::managed::{sleeper, Managed, DEADLINE};
use common::node::{container, phase};
use common::runtime::Runtime;
use common::{tree_node, try_get, wait_for, TestConfig};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};
use serde_json::Value;
use sergeant_runtime_adapters::cri::api::ContainerState;

/// How long sergeant's API server stays down.
const OUTAGE: Duration = Duration::from_secs(60);
/// Flags the private kube-apiserver gets on top of the shared one's. Without a watch
/// termination grace period, an apiserver holds its open watches (sergeant's among them) until
/// its 60 s HTTP shutdown timeout; with one it closes them and exits within seconds, as in a
/// rolling restart.
const APISERVER_EXTRA_ARGS: &str = "--shutdown-watch-termination-grace-period=5s";
/// How long after the restarted API server is ready a pod bound to the node then may take to
/// be reported Running. Sergeant's pod watch retries at most 5 s apart during the outage, so it
/// is watching again within 5 s of the return; the 410 Expired that the new server's watch
/// cache answers for the old resource version is relisted after at most 250 ms; then the pod
/// starts (about 1 s here) and its status is written. The rest is slack for a loaded machine.
/// With upstream's reflector back-off (up to 30 s doubled by jitter, kept for 2 min) this
/// took 51-67 s.
const RESUME_BOUND: Duration = Duration::from_secs(15);
/// The actors that talk to the API server, which must ride the outage out without a restart.
const API_ACTORS: [&str; 3] = [
    "root/node/node-status",
    "root/pods/api-source",
    "root/pods/status-manager",
];

/// Takes `server` away until the returned guard starts it again.
fn stop<'a>(server: &'a mut PrivateApiserver, cluster: &'a Cluster) -> Outage<'a> {
    assert!(
        server.terminate(),
        "kube-apiserver ignored SIGTERM:\n{}",
        server.tail()
    );
    Outage { server, cluster }
}

/// The stopped [`PrivateApiserver`]. Dropped without [`Outage::end`] (a failed assertion during
/// the outage), it starts the server again, so the test's cleanup can still remove the pods
/// through sergeant.
struct Outage<'a> {
    server: &'a mut PrivateApiserver,
    cluster: &'a Cluster,
}

impl Outage<'_> {
    /// Starts the API server again on the same port; returns when it was started.
    fn end(self) -> SystemTime {
        let started = SystemTime::now();
        if let Err(e) = self.server.launch(self.cluster) {
            panic!("the private kube-apiserver did not come back: {e}");
        }
        started
    }
}

impl Drop for Outage<'_> {
    fn drop(&mut self) {
        if !self.server.is_running() {
            let _ = self.server.launch(self.cluster);
        }
    }
}

/// Prints the end of sergeant's log when the test fails, since the agent's directory goes
/// with it.
struct LogOnFailure<'a>(&'a Managed);

impl Drop for LogOnFailure<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let tail = self.0.agent.log_tail(60);
            eprintln!("--- the end of sergeant's log ---\n{tail}");
        }
    }
}

/// One pod's containers as the runtime holds them: (id, running).
fn runtime_containers(runtime: &Runtime, uid: &str) -> BTreeSet<(String, bool)> {
    runtime
        .containers(&[("io.kubernetes.pod.uid", uid)])
        .into_iter()
        .map(|c| (c.id, c.state == ContainerState::ContainerRunning as i32))
        .collect()
}

/// The container `c` of a pod as the API server reports it: (runtime id, restartCount).
fn api_container(pod: &Value) -> (String, i64) {
    let status = container(pod, "containerStatuses", "c");
    let id = status["containerID"].as_str().unwrap_or_default();
    let id = id.strip_prefix("containerd://").unwrap_or(id).to_owned();
    (id, status["restartCount"].as_i64().unwrap_or(-1))
}

/// The test's long-running pods and the one container each runs.
struct Sleepers {
    /// (pod name, pod UID, container id).
    pods: Vec<(&'static str, String, String)>,
}

impl Sleepers {
    const NAMES: [&'static str; 2] = ["sleeper-a", "sleeper-b"];

    /// Creates the pods and waits until they run their first container.
    fn start(node: &Managed) -> Self {
        let uids: Vec<String> = Self::NAMES
            .iter()
            .map(|name| node.create(name, &sleeper()))
            .collect();
        let pods = Self::NAMES
            .into_iter()
            .zip(uids)
            .map(|(name, uid)| {
                let pod = node.wait_pod(name, "Running", |p| phase(p) == "Running");
                let (id, restarts) = api_container(&pod);
                assert_eq!(restarts, 0, "{name}: {pod}");
                (name, uid, id)
            })
            .collect();
        Self { pods }
    }

    /// Asserts that the runtime holds exactly the original container of each pod, running.
    fn assert_running_in(&self, runtime: &Runtime, when: &str) {
        for (name, uid, id) in &self.pods {
            assert_eq!(
                runtime_containers(runtime, uid),
                BTreeSet::from([(id.clone(), true)]),
                "{name}: the runtime holds only its original container, running, {when}"
            );
        }
    }
}

/// The Node's Ready condition: status and heartbeat.
fn ready(node: &Value) -> Option<(String, Time)> {
    let ready = node["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")?;
    let heartbeat = serde_json::from_value(ready["lastHeartbeatTime"].clone()).ok()?;
    Some((ready["status"].as_str()?.to_owned(), heartbeat))
}

fn renew_time(lease: &Value) -> Option<MicroTime> {
    serde_json::from_value(lease["spec"]["renewTime"].clone()).ok()
}

fn unix_micros(at: SystemTime) -> i64 {
    let micros = at
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_micros();
    i64::try_from(micros).expect("a time in range")
}

/// Whether process `pid` is alive (not gone, not a zombie).
fn alive(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

#[test]
fn a_minute_without_the_api_server_restarts_nothing_and_the_node_returns_to_ready() {
    let cluster = Cluster::from_env();
    let mut apiserver = PrivateApiserver::start(&cluster, APISERVER_EXTRA_ARGS);
    // Report the full status every 20 s even when nothing changed, so a fresh heartbeat after
    // the outage does not depend on whether the controller-manager marked the Node Unknown.
    let config = TestConfig::new().kubelet("nodeStatusReportFrequency: 20s\n");
    let node = Managed::start_via(&apiserver.url(), "pods-outage", &[], config, &[]);
    let _log = LogOnFailure(&node);
    let lease_of = || cluster.get_json(&["lease", "-n", "kube-node-lease", &node.node]);
    let sleepers = Sleepers::start(&node);
    wait_for("the Node Ready", DEADLINE, || {
        let ready = ready(&cluster.get_json(&["node", &node.node])?)?;
        (ready.0 == "True").then_some(())
    });
    let runtime = Runtime::connect();
    sleepers.assert_running_in(&runtime, "before the outage");
    let healthz = format!("{}/healthz", node.agent.healthz);

    let stopping = Instant::now();
    let outage = stop(&mut apiserver, &cluster);
    let stopped = Instant::now();
    eprintln!(
        "kube-apiserver exited {:?} after SIGTERM",
        stopped - stopping
    );
    let renewed_before = lease_of()
        .as_ref()
        .and_then(renew_time)
        .expect("the lease, renewed before the outage");
    let mut seen_ready = BTreeSet::new();
    let mut samples = 0;
    while stopped.elapsed() < OUTAGE {
        assert!(
            alive(node.agent.pid()),
            "sergeant exited:\n{}",
            node.agent.log()
        );
        assert_eq!(
            try_get(&healthz).map(|(status, _)| status),
            Ok(200),
            "{healthz} during the outage, {:?} in",
            stopped.elapsed()
        );
        sleepers.assert_running_in(
            &runtime,
            &format!("{:?} into the outage", stopped.elapsed()),
        );
        if let Some((status, _)) = cluster
            .get_json(&["node", &node.node])
            .as_ref()
            .and_then(ready)
        {
            seen_ready.insert(status);
        }
        assert_eq!(
            lease_of().as_ref().and_then(renew_time),
            Some(renewed_before.clone()),
            "nobody renews the lease while sergeant's API server is down"
        );
        samples += 1;
        std::thread::sleep(Duration::from_millis(500));
    }
    let status_line = tree_node(
        &node.agent.get_json("/debug/supervision"),
        "root/node/node-status",
    )["status"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        status_line.contains("last error"),
        "node-status noticed the outage: {status_line}"
    );
    let restarted = outage.end();
    let back = Instant::now();
    eprintln!(
        "outage of {:?} ({samples} samples): Node Ready seen as {seen_ready:?} through the shared API server",
        stopped.elapsed()
    );
    // The pod watch resumes through the restarted API server promptly: a pod bound now runs
    // within the bound, counted from the server's readiness.
    node.create("after-outage", &sleeper());
    wait_for(
        "a pod created after the restart Running",
        RESUME_BOUND.saturating_sub(back.elapsed()),
        || node.pod("after-outage").filter(|p| phase(p) == "Running"),
    );
    eprintln!(
        "a pod created after the restart ran {:?} after the API server was ready",
        back.elapsed()
    );

    let since = unix_micros(restarted);
    let heartbeat = wait_for(
        "the Node Ready with a heartbeat after the restart",
        DEADLINE,
        || {
            let (status, heartbeat) = ready(&cluster.get_json(&["node", &node.node])?)?;
            // lastHeartbeatTime has whole seconds.
            (status == "True" && heartbeat.0.as_second() >= since / 1_000_000).then_some(heartbeat)
        },
    );
    let ready_after = back.elapsed();
    let renewed = wait_for("the lease renewed after the restart", DEADLINE, || {
        let renewed = renew_time(&lease_of()?)?;
        (renewed.0.as_microsecond() >= since).then_some(renewed)
    });
    let renewed_after = back.elapsed();
    eprintln!(
        "after the restart: Node Ready (heartbeat {:?}) in {ready_after:?}, lease renewed ({:?}) in {renewed_after:?}",
        heartbeat.0, renewed.0
    );
    for (name, _, id) in &sleepers.pods {
        let pod = node.wait_pod(name, "Running", |p| phase(p) == "Running");
        assert_eq!(
            api_container(&pod),
            (id.clone(), 0),
            "{name}: the same container, never restarted"
        );
    }
    sleepers.assert_running_in(&runtime, "after the outage");

    let tree = node.agent.get_json("/debug/supervision");
    for path in API_ACTORS {
        let actor = tree_node(&tree, path);
        assert!(!actor.is_null(), "{path} in the supervision tree: {tree}");
        assert_eq!(actor["restarts"], 0, "{path} rode the outage out: {actor}");
    }
}
