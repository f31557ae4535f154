//! The runtime adapter behind a running sergeant is swapped live when its configuration
//! changes: to a second private containerd and back, to the fake adapter, and — when the new
//! endpoint does not answer — not at all, with the failure reported.
//!
//! Needs the two containerd instances `tests/run.sh` starts (SERGEANT_CRI_ENDPOINT and
//! SERGEANT_CRI_ENDPOINT_ALT).

mod common;

use std::fs;
use std::time::Duration;

use common::runtime::Runtime;
use common::{tree_node, wait_for, Agent, TestConfig};

const SWAP_DEADLINE: Duration = Duration::from_secs(20);

fn endpoint(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| {
        panic!("{var} is not set: run the tests through tests/run.sh, which starts containerd")
    })
}

fn config_for(base: &TestConfig, endpoint: &str, adapter: &str) -> TestConfig {
    base.reconfigured(
        format!(
            "containerRuntimeEndpoint: {endpoint}\n{}",
            base.kubelet_extra
        ),
        adapter,
    )
}

/// The ids of the containers of pods named `pod` in the runtime at `endpoint`.
fn containers_of(endpoint: &str, pod: &str) -> Vec<String> {
    Runtime::connect_to(endpoint)
        .containers(&[("io.kubernetes.pod.name", pod)])
        .into_iter()
        .map(|c| c.id)
        .collect()
}

fn adapter_status(agent: &Agent) -> String {
    agent.child_status("root/runtime/runtime-adapter")
}

fn wait_status(agent: &Agent, what: &str, wanted: impl Fn(&str) -> bool) -> String {
    wait_for(what, SWAP_DEADLINE, || {
        let status = adapter_status(agent);
        wanted(&status).then_some(status)
    })
}

#[test]
fn the_runtime_endpoint_is_swapped_live_and_back_and_a_dead_endpoint_is_refused() {
    let main = endpoint("SERGEANT_CRI_ENDPOINT");
    let alt = endpoint("SERGEANT_CRI_ENDPOINT_ALT");
    let base = TestConfig::new();
    let agent = Agent::start(&config_for(&base, &main, "cri"), &[]);
    let pid = agent.pid();
    let serving = |endpoint: &str| format!("serving cri at {endpoint} (containerd ");

    wait_status(&agent, "the handshake with main", |s| {
        s.starts_with(&serving(&main))
    });

    fs::write(&agent.config_path, config_for(&base, &alt, "cri").render()).expect("config edited");
    wait_status(&agent, "the switch to alt", |s| {
        s.starts_with(&serving(&alt))
    });
    assert_eq!(agent.pid(), pid, "no restart");
    let (_, metrics) = agent.get("/metrics");
    assert!(
        metrics.contains(&format!(
            r#"sergeant_runtime_adapter_info{{adapter="cri",endpoint="{alt}"}} 1"#
        )),
        "{metrics}"
    );
    assert!(
        metrics.contains(&format!(
            r#"sergeant_runtime_adapter_info{{adapter="cri",endpoint="{main}"}} 0"#
        )),
        "{metrics}"
    );

    fs::write(&agent.config_path, config_for(&base, &main, "cri").render()).expect("config edited");
    wait_status(&agent, "the switch back to main", |s| {
        s.starts_with(&serving(&main))
    });

    let dead = "unix:///run/sergeant-node/nobody-here.sock";
    fs::write(&agent.config_path, config_for(&base, dead, "cri").render()).expect("config edited");
    let status = wait_status(&agent, "the refused switch", |s| {
        s.contains("last switch failed")
    });
    assert!(
        status.starts_with(&serving(&main)),
        "main stays in service: {status}"
    );
    assert!(
        status.contains(dead),
        "the error names the endpoint: {status}"
    );
    let (_, metrics) = agent.get("/metrics");
    assert!(
        metrics.contains("sergeant_runtime_adapter_swap_failures_total 1"),
        "{metrics}"
    );

    let tree = agent.get_json("/debug/supervision");
    assert_eq!(
        tree_node(&tree, "root/runtime/runtime-adapter")["restarts"],
        0,
        "swaps never restart the actor"
    );
    assert_eq!(agent.pid(), pid);
}

#[test]
fn the_adapter_kind_is_swapped_live_from_cri_to_fake() {
    let main = endpoint("SERGEANT_CRI_ENDPOINT");
    let base = TestConfig::new();
    let agent = Agent::start(&config_for(&base, &main, "cri"), &[]);
    wait_status(&agent, "the handshake with main", |s| {
        s.starts_with(&format!("serving cri at {main} (containerd "))
    });
    fs::write(
        &agent.config_path,
        config_for(&base, &main, "fake").render(),
    )
    .expect("config edited");
    let status = wait_status(&agent, "the switch to fake", |s| {
        s.starts_with(&format!("serving fake at {main} (sergeant-fake "))
    });
    assert!(!status.contains("failed"), "{status}");
}

/// The pod `name` (before the node suffix) at `/pods`, if listed and Running.
fn running_pod(agent: &Agent, name: &str) -> Option<serde_json::Value> {
    let list = agent.get_json("/pods");
    list["items"]
        .as_array()?
        .iter()
        .find(|p| p["metadata"]["name"] == name && p["status"]["phase"] == "Running")
        .cloned()
}

fn pod_gone(agent: &Agent, name: &str) -> Option<()> {
    let list = agent.get_json("/pods");
    let items = list["items"].as_array()?;
    (!items.iter().any(|p| p["metadata"]["name"] == name)).then_some(())
}

#[test]
fn new_pods_land_on_the_runtime_swapped_in() {
    let main = endpoint("SERGEANT_CRI_ENDPOINT");
    let alt = endpoint("SERGEANT_CRI_ENDPOINT_ALT");
    let manifests = tempfile::tempdir().expect("a manifest dir");
    let base =
        TestConfig::new().kubelet(&format!("staticPodPath: {}\n", manifests.path().display()));
    let agent = Agent::start_with_args(
        &config_for(&base, &main, "cri"),
        &[],
        &["--hostname-override", "swap-node"],
    );
    let pid = agent.pid();
    let pod = |name: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  terminationGracePeriodSeconds: 1\n  \
             containers:\n  - name: main\n    image: 127.0.0.1:5000/sergeant/shell:1.0\n    command: [sleep, '3600']\n"
        )
    };
    for (runtime, other, name) in [(&alt, &main, "on-alt"), (&main, &alt, "on-main")] {
        fs::write(
            &agent.config_path,
            config_for(&base, runtime, "cri").render(),
        )
        .expect("config edited");
        wait_status(&agent, "the switch", |s| {
            s.starts_with(&format!("serving cri at {runtime} (containerd "))
        });
        fs::write(manifests.path().join(format!("{name}.yaml")), pod(name))
            .expect("manifest written");
        let full = format!("{name}-swap-node");
        wait_for(&format!("{full} Running"), SWAP_DEADLINE, || {
            running_pod(&agent, &full)
        });
        assert_eq!(
            containers_of(runtime, &full).len(),
            1,
            "{full} runs on {runtime}"
        );
        assert!(
            containers_of(other, &full).is_empty(),
            "{full} does not run on {other}"
        );
        fs::remove_file(manifests.path().join(format!("{name}.yaml"))).expect("manifest removed");
        wait_for(&format!("{full} gone"), SWAP_DEADLINE, || {
            pod_gone(&agent, &full)
        });
        assert!(
            containers_of(runtime, &full).is_empty(),
            "{full} removed from {runtime}"
        );
    }
    assert_eq!(agent.pid(), pid, "no restart");
}
