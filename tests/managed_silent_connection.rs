//! Managed mode when the path to the API server dies without a word: no FIN, no RST, no
//! error, the bytes just stop (a NAT entry or a load balancer's flow dropped, the far host gone
//! from the network). sergeant talks to the shared kube-apiserver through a TCP relay in this
//! test (`common::relay`); the relay goes silent on every connection open at one moment, while it relays any
//! connection opened after it normally, as the healthy path a new connection would take.
//!
//! sergeant's HTTP/2 pings (30 s without a frame, then 15 s for the answer) must find the dead
//! connection and replace it: a pod bound to the node afterwards is seen, started and reported
//! Running well before the almost five minutes an HTTP/1.1 client waits out its read timeout.
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT).

mod common;

use std::time::{Duration, Instant};

use common::cluster::Cluster;
use common::managed::{sleeper, Managed};
use common::node::phase;
use common::relay::Relay;
use common::{wait_for, TestConfig};

/// How long after the relay went silent a pod created then may take to be reported Running:
/// at most 45 s until the pings give the connection up, up to 5 s until the pod watch retries
/// on a new connection, then the pod's start and its status write. The rest is slack for a
/// loaded machine.
const RECOVERY_BOUND: Duration = Duration::from_secs(80);

#[test]
fn a_silently_dead_api_connection_is_replaced_and_a_new_pod_runs() {
    let cluster = Cluster::from_env();
    let relay = Relay::to_apiserver(&cluster);
    let node = Managed::start_via(&relay.url(), "pods-silent", &[], TestConfig::new(), &[]);
    node.create("before", &sleeper());
    node.wait_pod("before", "Running", |p| phase(p) == "Running");

    let silenced = relay.silence_open_connections();
    let cut = Instant::now();
    assert!(silenced >= 1, "sergeant had a connection through the relay");
    node.create("after", &sleeper());
    wait_for(
        "a pod created after the connection went silent Running",
        RECOVERY_BOUND,
        || node.pod("after").filter(|p| phase(p) == "Running"),
    );
    eprintln!(
        "{silenced} connection(s) silenced; a pod created then ran {:?} later",
        cut.elapsed()
    );
    assert!(
        relay.accepted() > silenced,
        "sergeant opened a new connection through the relay"
    );
}
