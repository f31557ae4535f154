//! How managed mode reads its Node for each status round, as an audit-logging API server of the
//! shared control plane sees the requests: from the API server's watch cache
//! (`resourceVersion=0`), as upstream's kubelet reads it, not as a quorum read of etcd every
//! round.
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT).

mod common;

use std::fs;
use std::path::Path;
use std::time::Duration;

use common::apiserver::PrivateApiserver;
use common::cluster::Cluster;
use common::managed::Managed;
use common::{wait_for, TestConfig};
use serde_json::Value;

/// The request URIs of every `get` of `nodes/<node>` by the node itself in `audit_log`.
fn node_gets(audit_log: &Path, node: &str) -> Vec<String> {
    let user = format!("system:node:{node}");
    fs::read_to_string(audit_log)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| {
            event["user"]["username"] == user.as_str()
                && event["verb"] == "get"
                && event["objectRef"]["resource"] == "nodes"
                && event["objectRef"]["name"] == node
                && event["objectRef"]["subresource"].is_null()
        })
        .filter_map(|event| event["requestURI"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn each_status_round_reads_the_node_from_the_api_servers_cache() {
    let cluster = Cluster::from_env();
    let scratch = tempfile::tempdir().expect("a temporary directory");
    let (apiserver, audit_log) = PrivateApiserver::start_node_audited(&cluster, scratch.path());
    let node = "node-cache-reads";
    let config = TestConfig::new().kubelet("nodeStatusUpdateFrequency: 1s\n");
    let _agent = Managed::start_via(&apiserver.url(), node, &[], config, &[]);
    let gets = wait_for(
        "three status rounds' Node reads",
        Duration::from_secs(60),
        || {
            let gets = node_gets(&audit_log, node);
            (gets.len() >= 3).then_some(gets)
        },
    );
    assert!(
        gets.iter().all(|uri| uri.contains("resourceVersion=0")),
        "every read of the Node is served from the watch cache: {gets:?}"
    );
}
