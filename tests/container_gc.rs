//! Garbage collection of dead containers on the real containerd: a crash-looping container
//! keeps climbing in restarts while the runtime holds only its newest instance and the dead
//! ones `maxDeadPerContainer` allows, and a completed init container (the newest, and only,
//! instance of its container) survives every pass, so it is never run again. The log directory
//! of a deleted pod goes once nothing of the pod is left.
//!
//! Both tests switch the collector to a one-second period by editing the configuration file of
//! the running agent, so they also show `garbageCollection` applied live.
//!
//! Needs the private containerd `tests/run.sh` starts (SERGEANT_CRI_ENDPOINT) and its local
//! registry with the test images.

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::time::{Duration, Instant};

use common::node::{container, manifest, phase, Node, POD_DEADLINE, SHELL};
use common::runtime::Runtime;
use common::{tree_node, wait_for};
use sergeant_runtime_adapters::cri::api::{Container, ContainerState};

/// The labels sergeant puts on what it creates (`actors/src/pod/labels.rs`).
const NODE_LABEL: &str = "sergeant.dev/node";
const CONTAINER_LABEL: &str = "io.kubernetes.container.name";
/// The pass counter of the collector (the count of its duration histogram).
const PASSES: &str = "sergeant_container_gc_duration_seconds_count";
/// How long the runtime may hold more instances than the policy allows: the pod actor adds
/// one between two passes, and the next pass (one second later) trims it.
const TRIM_DEADLINE: Duration = Duration::from_secs(5);

/// Every instance of container `name` the agent of `node` created, newest first.
fn instances(runtime: &Runtime, node: &str, name: &str) -> Vec<Container> {
    runtime.containers(&[(NODE_LABEL, node), (CONTAINER_LABEL, name)])
}

/// Turns the collector of a running `node` to `settings` (lines under `garbageCollection:`)
/// by editing its configuration file, and waits until the collector runs with the new period.
fn collect_with(node: &Node, settings: &str) {
    let path = &node.agent.config_path;
    let mut text = fs::read_to_string(path).expect("the config file");
    text.push_str("garbageCollection:\n");
    for line in settings.lines() {
        text.push_str(&format!("  {line}\n"));
    }
    fs::write(path, text).expect("config edited");
    wait_for(
        "the collector on its new period",
        Duration::from_secs(10),
        || {
            let tree = node.agent.get_json("/debug/supervision");
            let status = tree_node(&tree, "root/node/gc")["status"]
                .as_str()?
                .to_owned();
            status.contains("every 1s").then_some(())
        },
    );
    let state = node.agent.get_json("/debug/config");
    let changes = &state["lastReload"]["changes"];
    let applied = changes.as_array().is_some_and(|all| {
        all.iter().any(|c| {
            c["field"] == "sergeant.garbageCollection" && c["apply"]["live"] == "container-gc"
        })
    });
    assert!(applied, "applied live: {changes}");
}

/// The value of the counter `name` (a metric without labels) on `/metrics`; 0 before its
/// first increment.
fn metric(node: &Node, name: &str) -> u64 {
    let (_, metrics) = node.agent.get("/metrics");
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0)
}

fn id_of(container: &Container) -> String {
    container.id.clone()
}

#[test]
fn a_crash_loop_keeps_its_newest_instance_and_one_dead_one() {
    let node = Node::start("gc-crash");
    collect_with(&node, "period: 1s\nmaxDeadPerContainer: 1\n");
    let runtime = Runtime::connect();
    node.write(
        "crash.yaml",
        &manifest(
            "crash",
            &format!("  containers:\n  - name: fails\n    image: {SHELL}\n    command: [sh, -c, 'exit 3']\n"),
        ),
    );
    let mut seen = BTreeSet::new();
    let mut over_since: Option<Instant> = None;
    let pod = wait_for(
        "restarts past 3 with the runtime trimmed to the newest and one dead instance",
        Duration::from_secs(90),
        || {
            let instances = instances(&runtime, "node-gc-crash", "fails");
            seen.extend(instances.iter().map(id_of));
            // The newest, one dead one, and at most one the pod actor made since the last pass.
            assert!(instances.len() <= 3, "too many instances: {instances:#?}");
            if instances.len() > 2 {
                let since = *over_since.get_or_insert_with(Instant::now);
                assert!(
                    since.elapsed() < TRIM_DEADLINE,
                    "not trimmed within {TRIM_DEADLINE:?}: {instances:#?}"
                );
            } else {
                over_since = None;
            }
            let pod = node.pod("crash")?;
            let fails = container(&pod, "containerStatuses", "fails");
            let settled = fails["restartCount"].as_u64().unwrap_or(0) > 3
                && instances.len() <= 2
                && fails["lastState"]["terminated"]["exitCode"] == 3;
            settled.then_some(pod)
        },
    );
    assert!(
        seen.len() >= 5,
        "restart 4 means 5 instances were made, and the runtime holds 2: {seen:?}"
    );
    let last = &container(&pod, "containerStatuses", "fails")["lastState"]["terminated"];
    assert!(last["finishedAt"].is_string(), "{pod}");
    let collected = metric(&node, "sergeant_containers_garbage_collected_total");
    assert!(collected >= 3, "{collected} containers collected");
}

#[test]
fn a_completed_init_container_is_kept_and_not_run_again() {
    let node = Node::start("gc-init");
    // No dead instance allowed at all: only the newest-instance guarantee keeps the init
    // container.
    collect_with(
        &node,
        "period: 1s\nmaxDeadPerContainer: 0\nmaxDeadContainers: 0\n",
    );
    let runtime = Runtime::connect();
    let spec = format!(
        "  initContainers:\n  - {{name: prepare, image: {SHELL}, command: [sh, -c, 'exit 0']}}\n\
         \x20 containers:\n  - {{name: app, image: {SHELL}, command: [sleep, '3600']}}\n"
    );
    node.write("init.yaml", &manifest("init", &spec));
    let pod = node.wait_pod("init", "Running", |p| phase(p) == "Running");
    let init_id = container(&pod, "initContainerStatuses", "prepare")["containerID"]
        .as_str()
        .expect("the init container's id")
        .trim_start_matches("containerd://")
        .to_owned();
    let before = metric(&node, PASSES);
    wait_for("three more collection passes", POD_DEADLINE, || {
        (metric(&node, PASSES) >= before + 3).then_some(())
    });
    let prepare = instances(&runtime, "node-gc-init", "prepare");
    assert_eq!(
        prepare.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        [init_id.as_str()],
        "one init instance, the original: {prepare:#?}"
    );
    assert_eq!(prepare[0].state, ContainerState::ContainerExited as i32);
    assert_eq!(instances(&runtime, "node-gc-init", "app").len(), 1);
    let pod = node.pod("init").expect("the pod is listed");
    assert_eq!(phase(&pod), "Running", "{pod}");
    let init = container(&pod, "initContainerStatuses", "prepare");
    assert_eq!(init["state"]["terminated"]["exitCode"], 0, "{pod}");
    assert_eq!(
        init["containerID"],
        format!("containerd://{init_id}"),
        "{pod}"
    );
    assert_eq!(
        container(&pod, "containerStatuses", "app")["restartCount"],
        0,
        "{pod}"
    );
}

#[test]
fn the_log_directory_of_a_deleted_pod_is_removed() {
    // Its own log root, so no other test's agent collects this pod's directory first.
    let logs = tempfile::tempdir().expect("a log root");
    let node = Node::start_with(
        "gc-logs",
        &format!("podLogsDir: {}\n", logs.path().display()),
    );
    collect_with(&node, "period: 1s\n");
    node.write(
        "logs.yaml",
        &manifest(
            "logs",
            &format!(
                "  containers:\n  - {{name: main, image: {SHELL}, command: [sleep, '3600']}}\n"
            ),
        ),
    );
    let pod = node.wait_pod("logs", "Running", |p| phase(p) == "Running");
    let meta = &pod["metadata"];
    let dir = logs.path().join(format!(
        "{}_{}_{}",
        meta["namespace"].as_str().expect("a namespace"),
        meta["name"].as_str().expect("a name"),
        meta["uid"].as_str().expect("a uid"),
    ));
    assert!(dir.is_dir(), "{} exists while the pod runs", dir.display());
    node.remove("logs.yaml");
    wait_for("the pod to be gone", POD_DEADLINE, || {
        node.pod("logs").is_none().then_some(())
    });
    wait_for("its log directory to be removed", TRIM_DEADLINE, || {
        (!dir.exists()).then_some(())
    });
    // The pass counts what it removed after the removal itself: wait for the count too.
    wait_for("the removal to be counted", TRIM_DEADLINE, || {
        (metric(
            &node,
            "sergeant_pod_log_directories_garbage_collected_total",
        ) >= 1)
            .then_some(())
    });
}
