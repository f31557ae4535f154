//! The pod conditions a node reports, against the real API server and the real containerd,
//! where upstream's node conformance suite found sergeant wrong:
//! - an init container that failed in a `restartPolicy: Never` pod leaves `Initialized` false
//!   with upstream's message, `containers with incomplete status: [NAME]` ("InitContainer should
//!   not start app containers and fail the pod if init containers fail on a RestartNever pod");
//! - readiness gates ("Pods should support pod readiness gates"): a running pod whose
//!   containers are ready but whose gates' conditions do not exist is not ready, with
//!   upstream's reason and message; once another client sets the gates' conditions true through
//!   the status subresource, one at a time, the pod waits on the other gate, then is Ready (the
//!   pod actor hears of a change of its gates' conditions; before, it heard only of spec, label
//!   and annotation changes and the pod stayed unready).
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT).

mod common;

use common::managed::Managed;
use common::node::{phase, SHELL};
use serde_json::{json, Value};

/// `(status, reason, message)` of the pod's condition `type_`, empty strings when absent.
fn condition(pod: &Value, type_: &str) -> (String, String, String) {
    let found = pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == type_);
    let text = |key: &str| {
        found
            .and_then(|c| c[key].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    (text("status"), text("reason"), text("message"))
}

#[test]
fn a_failed_init_container_is_named_as_upstream_words_it() {
    let node = Managed::start("init-message", &[]);
    node.create(
        "init-fails",
        &format!(
            "  restartPolicy: Never\n  initContainers:\n  - name: init1\n    image: {SHELL}\n    command: [sh, -c, 'exit 0']\n  \
             - name: init2\n    image: {SHELL}\n    command: [sh, -c, 'exit 1']\n  \
             containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n"
        ),
    );
    let pod = node.wait_pod("init-fails", "Failed", |p| phase(p) == "Failed");
    assert_eq!(
        condition(&pod, "Initialized"),
        (
            "False".to_owned(),
            "ContainersNotInitialized".to_owned(),
            "containers with incomplete status: [init2]".to_owned()
        ),
        "{}",
        pod["status"]
    );
    assert_eq!(
        condition(&pod, "ContainersReady"),
        (
            "False".to_owned(),
            "ContainersNotReady".to_owned(),
            "containers with unready status: [main]".to_owned()
        ),
        "{}",
        pod["status"]
    );
}

#[test]
fn a_running_pod_is_ready_only_once_its_readiness_gates_conditions_are_true() {
    let node = Managed::start("readiness-gates", &[]);
    node.create(
        "gated",
        &format!(
            "  readinessGates:\n  - conditionType: example.com/first\n  - conditionType: example.com/second\n  \
             containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n"
        ),
    );
    let pod = node.wait_pod("gated", "Running with ready containers", |p| {
        phase(p) == "Running" && condition(p, "ContainersReady").0 == "True"
    });
    assert_eq!(
        condition(&pod, "Ready"),
        (
            "False".to_owned(),
            "ReadinessGatesNotReady".to_owned(),
            "corresponding condition of pod readiness gate \"example.com/first\" does not exist.corresponding condition of pod readiness gate \"example.com/second\" does not exist.".to_owned()
        ),
        "{}",
        pod["status"]
    );

    // Another client (a load balancer controller, say) sets the gates' conditions through the
    // status subresource: the pod is Ready once both are true, and not before.
    let set_gate = |gate: &str| {
        let condition = json!({"type": gate, "status": "True"});
        let patch = json!({"status": {"conditions": [condition]}});
        node.patch_subresource("gated", "status", &patch);
    };
    set_gate("example.com/first");
    let pod = node.wait_pod("gated", "Ready waiting on the second gate only", |p| {
        condition(p, "Ready").2
            == "corresponding condition of pod readiness gate \"example.com/second\" does not exist."
    });
    assert_eq!(condition(&pod, "Ready").0, "False", "{}", pod["status"]);
    set_gate("example.com/second");
    let pod = node.wait_pod("gated", "Ready once both gates are true", |p| {
        condition(p, "Ready").0 == "True"
    });
    assert_eq!(
        condition(&pod, "example.com/first").0,
        "True",
        "the gate's condition is kept: {}",
        pod["status"]
    );
}
