//! A runtime that dies under the client and comes back: fast `Unavailable` while it is down,
//! and the same client works again once it is up, without being rebuilt.
//!
//! Uses its own containerd instance (`crikill`) so killing it disturbs no other test.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use sergeant_config::Endpoint;
use sergeant_runtime_adapters::cri::api::{
    ListContainersRequest, ListPodSandboxRequest, VersionRequest,
};
use sergeant_runtime_adapters::cri::{CriClient, CriClientConfig, CriError};

const INSTANCE: &str = "crikill";

fn node_env_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/node-env/node-env.sh")
}

/// Runs `node-env.sh ARGS… --instance crikill` and returns the KEY=VALUE lines it printed.
fn node_env(args: &[&str]) -> HashMap<String, String> {
    let output = Command::new("bash")
        .arg(node_env_script())
        .args(args)
        .args(["--instance", INSTANCE])
        .output()
        .expect("run node-env.sh");
    assert!(
        output.status.success(),
        "node-env.sh {args:?} --instance {INSTANCE} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Takes the instance down at the end, whatever happened.
struct InstanceGuard;

impl Drop for InstanceGuard {
    fn drop(&mut self) {
        let status = Command::new("bash")
            .arg(node_env_script())
            .args(["down", "--instance", INSTANCE])
            .status();
        if !std::thread::panicking() {
            assert!(
                matches!(status, Ok(s) if s.success()),
                "node-env.sh down failed: {status:?}"
            );
        }
    }
}

fn is_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // A zombie no one reaps is as dead as it gets.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_runtime_is_unavailable_fast_then_the_same_client_recovers() {
    // The harness must provide the main endpoint even though this test uses its own instance.
    let _ = common::endpoint();
    let _guard = InstanceGuard;
    let env = node_env(&["up"]);
    let socket = env
        .get("CONTAINERD_SOCKET")
        .expect("CONTAINERD_SOCKET printed")
        .clone();
    let run_dir = env
        .get("SERGEANT_RUN_DIR")
        .cloned()
        .unwrap_or_else(|| "/run/sergeant-node".to_string());

    let endpoint = Endpoint::parse(&format!("unix://{socket}")).expect("endpoint");
    let client = CriClient::new(
        &CriClientConfig::new(endpoint).with_runtime_request_timeout(Duration::from_secs(30)),
    )
    .expect("client");
    client
        .call(VersionRequest::default())
        .await
        .expect("version before the kill");
    client
        .call(ListPodSandboxRequest { filter: None })
        .await
        .expect("list before the kill");

    let pid_file = Path::new(&run_dir).join(INSTANCE).join("containerd.pid");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .expect("containerd pid file")
        .trim()
        .parse()
        .expect("pid");
    kill(Pid::from_raw(pid), Signal::SIGKILL).expect("kill containerd");
    common::wait_for(
        Duration::from_secs(10),
        "containerd to die",
        || async move { is_gone(pid).then_some(()) },
    )
    .await;

    // Every call while it is down fails fast with Unavailable.
    for _ in 0..3 {
        let started = Instant::now();
        let err = client
            .call(VersionRequest::default())
            .await
            .expect_err("containerd is dead");
        let took = started.elapsed();
        assert!(
            matches!(err, CriError::Unavailable { .. }),
            "expected Unavailable, got {err}"
        );
        assert!(took < Duration::from_secs(2), "Unavailable took {took:?}");
        eprintln!("while down, after {took:?}: {err}");
    }
    let err = client
        .call(ListContainersRequest { filter: None })
        .await
        .expect_err("still dead");
    assert!(err.is_transient(), "{err}");

    node_env(&["up"]);
    let recovered = Instant::now();
    let version = common::wait_for(
        Duration::from_secs(30),
        "the same client to work again",
        || {
            let client = client.clone();
            async move { client.call(VersionRequest::default()).await.ok() }
        },
    )
    .await;
    assert_eq!(version.runtime_name, "containerd");
    client
        .call(ListPodSandboxRequest { filter: None })
        .await
        .expect("list after recovery");
    eprintln!(
        "client recovered {:?} after containerd was restarted",
        recovered.elapsed()
    );
}
