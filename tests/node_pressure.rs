//! Node pressure on real containerd and the real control plane, made by real pods: a pod that
//! forks past a `pid.available` threshold, and a pod that allocates past a `memory.available`
//! threshold set relative to the machine's memory at test start. The node's pressure
//! conditions flip in the API server with their upstream reasons and clear after the
//! transition period; the greedy pod is evicted (Failed, `Evicted`, upstream's message, an
//! Event, `kubelet_evictions`), the pods that did nothing wrong keep running, and new pods are
//! refused while the pressure lasts.
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT).

mod common;

use std::time::{Duration, Instant};

use common::managed::{sleeper, Managed};
use common::node::SHELL;
use common::{wait_for, TestConfig};
use serde_json::Value;

/// How long a pressure may take to be seen, acted on and reported: one stats period (10 s),
/// one status round, and the API server's round trips, with room for a loaded machine.
const PRESSURE_DEADLINE: Duration = Duration::from_secs(90);
/// How long the hog may take to allocate past the memory threshold, on a machine shared with
/// builds.
const HOG_DEADLINE: Duration = Duration::from_secs(180);
/// The transition period the tests configure: a pressure condition clears this long after
/// the pressure was last observed.
const TRANSITION: &str = "15s";

/// A managed node `pressure-<tag>` with the transition period above and `kubelet` lines.
fn start(tag: &str, kubelet: &str) -> Managed {
    let config = TestConfig::new().kubelet(&format!(
        "evictionPressureTransitionPeriod: {TRANSITION}\n{kubelet}"
    ));
    let node = Managed::start_with(&format!("pressure-{tag}"), &[], config, &[]);
    wait_for("the node registered", PRESSURE_DEADLINE, || {
        condition(&node, "Ready").filter(|c| c["status"] == "True")
    });
    node
}

/// The node's condition `kind` in the API server.
fn condition(node: &Managed, kind: &str) -> Option<Value> {
    let object = node.cluster.get_json(&["node", &node.node])?;
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
        .cloned()
}

/// Waits until condition `kind` has `status`, and returns it.
fn wait_condition(node: &Managed, kind: &str, status: &str) -> Value {
    wait_for(&format!("{kind}={status}"), PRESSURE_DEADLINE, || {
        condition(node, kind).filter(|c| c["status"] == status)
    })
}

/// Rewrites the agent's configuration with `kubelet` lines added and waits until it is in
/// force (the eviction settings apply live).
fn reconfigure(node: &Managed, kubelet: &str) {
    let edited = TestConfig {
        kubelet_extra: format!("{}{kubelet}", node.config.kubelet_extra),
        healthz_port: node.config.healthz_port,
        read_only_port: node.config.read_only_port,
        port: node.config.port,
        address: node.config.address.clone(),
        sergeant: node.config.sergeant.clone(),
    };
    let generation = node.agent.get_json("/debug/config")["generation"].clone();
    std::fs::write(&node.agent.config_path, edited.render()).expect("config edited");
    wait_for("the reload", PRESSURE_DEADLINE, || {
        let state = node.agent.get_json("/debug/config");
        (state["generation"] != generation).then_some(())
    });
}

/// A number from `/proc` (`/proc/sys/kernel/pid_max`), or the total of `/proc/loadavg`'s
/// `running/total` field.
fn processes() -> (u64, u64) {
    let max = std::fs::read_to_string("/proc/sys/kernel/pid_max").expect("pid_max");
    let loadavg = std::fs::read_to_string("/proc/loadavg").expect("loadavg");
    let total = loadavg
        .split_whitespace()
        .nth(3)
        .and_then(|f| f.split_once('/'))
        .and_then(|(_, total)| total.parse().ok())
        .expect("a process count");
    (max.trim().parse().expect("a pid_max"), total)
}

fn status_field<'a>(pod: &'a Value, field: &str) -> &'a str {
    pod["status"][field].as_str().unwrap_or_default()
}

/// The value of `/metrics` line `kubelet_evictions{eviction_signal="<signal>"}`.
fn evictions(node: &Managed, signal: &str) -> Option<f64> {
    node.metric(&format!(
        "kubelet_evictions{{eviction_signal=\"{signal}\"}}"
    ))
}

#[test]
fn a_forking_pod_past_pid_available_is_evicted_and_new_pods_are_refused_meanwhile() {
    let node = start("pids", "");
    let quiet_uid = node.create("quiet", &sleeper());
    node.wait_pod("quiet", "running", |p| {
        status_field(p, "phase") == "Running"
    });
    assert_eq!(
        wait_condition(&node, "PIDPressure", "False")["reason"],
        "KubeletHasSufficientPID"
    );

    // Met once 400 more processes than now run on the machine; the forker starts 1500.
    let (max, now) = processes();
    let threshold = max - (now + 400);
    reconfigure(
        &node,
        &format!("evictionHard:\n  pid.available: \"{threshold}\"\n"),
    );
    let forker_uid = node.create(
        "forker",
        &format!(
            "  containers:\n  - name: forker\n    image: {SHELL}\n    command: [\"sh\", \"-c\", \
             \"i=0; while [ $i -lt 1500 ]; do sleep 3600 & i=$((i+1)); done; wait\"]\n"
        ),
    );
    let crossed = Instant::now();

    let pressure = wait_condition(&node, "PIDPressure", "True");
    let posted = crossed.elapsed();
    assert_eq!(pressure["reason"], "KubeletHasInsufficientPID");
    assert_eq!(
        pressure["message"],
        "kubelet has insufficient PID available"
    );

    // A pod created under pressure is refused with upstream's reason.
    let late_uid = node.create("late", &sleeper());
    let late = node.wait_pod("late", "refused", |p| status_field(p, "phase") == "Failed");
    assert_eq!(status_field(&late, "reason"), "Evicted");
    assert_eq!(
        status_field(&late, "message"),
        "The node had condition: [PIDPressure]. "
    );
    assert!(!late_uid.is_empty());

    let forker = node.wait_pod("forker", "evicted", |p| {
        status_field(p, "phase") == "Failed"
    });
    let evicted = crossed.elapsed();
    assert_eq!(status_field(&forker, "reason"), "Evicted");
    let message = status_field(&forker, "message");
    assert!(
        message.starts_with(&format!(
            "The node was low on resource: pids. Threshold quantity: {threshold}, available: "
        )),
        "{message}"
    );
    let event = node.wait_event(("forker", &forker_uid), "Evicted", |_| true);
    assert_eq!(event["type"], "Warning");
    assert_eq!(event["message"], message);
    assert_eq!(evictions(&node, "pid.available"), Some(1.0));

    // The pressure is gone with the forker's processes; the condition clears after the
    // transition period, and the quiet pod never stopped.
    let cleared = wait_condition(&node, "PIDPressure", "False");
    assert_eq!(cleared["reason"], "KubeletHasSufficientPID");
    let quiet = node.pod("quiet").expect("the quiet pod");
    assert_eq!(status_field(&quiet, "phase"), "Running");
    assert_eq!(quiet["metadata"]["uid"], quiet_uid.as_str());
    assert_eq!(
        quiet["status"]["containerStatuses"][0]["restartCount"], 0,
        "the quiet pod's container never restarted"
    );
    println!(
        "pid pressure: condition posted {:.1} s and pod evicted {:.1} s after the forker was created",
        posted.as_secs_f64(),
        evicted.as_secs_f64()
    );
}

#[test]
fn a_pod_allocating_past_memory_available_is_evicted_and_a_guaranteed_pod_survives() {
    let node = start("memory", "");
    let guaranteed = format!(
        "  containers:\n  - name: c\n    image: {SHELL}\n    command: [\"sleep\", \"3600\"]\n    \
         resources:\n      requests: {{cpu: 50m, memory: 64Mi}}\n      limits: {{cpu: 50m, memory: 64Mi}}\n"
    );
    node.create("guaranteed", &guaranteed);
    node.wait_pod("guaranteed", "running", |p| {
        status_field(p, "phase") == "Running"
    });

    // The threshold: 768 MiB less than the node has available now, as sergeant measures it.
    let summary = node.agent.get_json("/stats/summary");
    let available = summary["node"]["memory"]["availableBytes"]
        .as_u64()
        .expect("the node's available memory");
    let threshold = available - (768 << 20);
    reconfigure(
        &node,
        &format!("evictionHard:\n  memory.available: \"{threshold}\"\n"),
    );
    assert_eq!(
        condition(&node, "MemoryPressure").expect("the condition")["status"],
        "False"
    );

    // The hog holds 2 GiB of anonymous memory (busybox tail keeps an unterminated line), four
    // pipes at once: one fills at some 40 MB/s on a busy machine.
    let hog_uid = node.create(
        "hog",
        &format!(
            "  containers:\n  - name: hog\n    image: {SHELL}\n    command: [\"sh\", \"-c\", \
             \"for i in 1 2 3 4; do {{ head -c 536870912 /dev/zero; sleep 3600; }} | tail & done; \
             wait\"]\n"
        ),
    );
    let crossed = Instant::now();
    let pressure = wait_for("MemoryPressure=True", HOG_DEADLINE, || {
        condition(&node, "MemoryPressure").filter(|c| c["status"] == "True")
    });
    let posted = crossed.elapsed();
    assert_eq!(pressure["reason"], "KubeletHasInsufficientMemory");
    assert_eq!(
        pressure["message"],
        "kubelet has insufficient memory available"
    );

    let hog = node.wait_pod("hog", "evicted", |p| status_field(p, "phase") == "Failed");
    let evicted = crossed.elapsed();
    assert_eq!(status_field(&hog, "reason"), "Evicted");
    let message = status_field(&hog, "message");
    assert!(
        message.starts_with("The node was low on resource: memory. Threshold quantity: "),
        "{message}"
    );
    assert!(
        message.contains("Container hog was using ")
            && message.ends_with(", request is 0, has larger consumption of memory. "),
        "{message}"
    );
    node.wait_event(("hog", &hog_uid), "Evicted", |e| e["message"] == message);
    assert_eq!(evictions(&node, "memory.available"), Some(1.0));

    let cleared = wait_condition(&node, "MemoryPressure", "False");
    assert_eq!(cleared["reason"], "KubeletHasSufficientMemory");
    let survivor = node.pod("guaranteed").expect("the guaranteed pod");
    assert_eq!(status_field(&survivor, "phase"), "Running");
    assert_eq!(
        survivor["status"]["containerStatuses"][0]["restartCount"],
        0
    );
    assert_eq!(
        evictions(&node, "memory.available"),
        Some(1.0),
        "one eviction only"
    );
    println!(
        "memory pressure: condition posted {:.1} s and pod evicted {:.1} s after the hog was created",
        posted.as_secs_f64(),
        evicted.as_secs_f64()
    );
}
