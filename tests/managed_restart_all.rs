//! The `RestartAllContainers` restart rule action (KEP-5532, `RestartAllContainersOnContainerExits`,
//! beta and on in the pinned release) against the real API server and the real containerd: a
//! container exiting with a code its rule matches resets the whole pod in place — every
//! container taken out of the runtime, the init container run again, the other container
//! restarted too — while the pod's `AllContainersRestarting` condition is true, and the pod
//! ends Running with every container counted as restarted once. Before, sergeant left such an
//! exit to the container's own policy (`Never` here): the pod ended Failed.
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT).

mod common;

use std::io::{BufRead, BufReader};
use std::sync::mpsc;

use common::managed::Managed;
use common::node::{condition, container, phase, SHELL};

/// The init container appends a line to `/work/init-runs` each time it runs. `source` exits 42
/// the first time; once restarted it checks the init container ran exactly twice (else exits
/// 3, which nothing restarts) and stays up. `other` just stays up.
fn spec() -> String {
    let mount = "    volumeMounts:\n    - {name: work, mountPath: /work}\n";
    let source = "if [ -f /work/ran ]; then [ \"$(wc -l < /work/init-runs)\" -eq 2 ] || exit 3; \
                  sleep 3600; else touch /work/ran; exit 42; fi";
    format!(
        "  restartPolicy: Never\n  initContainers:\n  - name: init\n    image: {SHELL}\n    \
         command: [sh, -c, 'echo run >> /work/init-runs']\n{mount}  containers:\n  \
         - name: source\n    image: {SHELL}\n    command: [sh, -c, '{source}']\n    \
         restartPolicy: Never\n    restartPolicyRules:\n    - action: RestartAllContainers\n      \
         exitCodes: {{operator: In, values: [42]}}\n{mount}  - name: other\n    image: {SHELL}\n    \
         command: [sleep, '3600']\n  volumes:\n  - name: work\n    emptyDir: {{}}\n"
    )
}

/// The restart count of container `name` in the status list `field`.
fn restarts(pod: &serde_json::Value, field: &str, name: &str) -> i64 {
    container(pod, field, name)["restartCount"]
        .as_i64()
        .unwrap_or(0)
}

#[test]
fn a_restart_all_containers_rule_resets_the_pod_in_place() {
    let node = Managed::start("restart-all", &[]);
    let uid = node.create("reset", &spec());
    // Every value the condition takes, as the API server tells its watchers.
    let mut watch = node.cluster.kubectl_spawn(&[
        "get",
        "pod",
        "reset",
        "-n",
        "default",
        "-w",
        "-o",
        "jsonpath={.status.conditions[?(@.type==\"AllContainersRestarting\")].status}{\"\\n\"}",
    ]);
    let (seen_tx, seen) = mpsc::channel();
    let out = watch.stdout.take().expect("piped");
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = seen_tx.send(line);
        }
    });

    let pod = node.wait_pod("reset", "every container restarted once and running", |p| {
        let running = |field, name| container(p, field, name)["state"]["running"].is_object();
        restarts(p, "containerStatuses", "source") >= 1
            && restarts(p, "containerStatuses", "other") >= 1
            && restarts(p, "initContainerStatuses", "init") >= 1
            && running("containerStatuses", "source")
            && running("containerStatuses", "other")
    });
    assert_eq!(phase(&pod), "Running", "{}", pod["status"]);
    for (field, name) in [
        ("initContainerStatuses", "init"),
        ("containerStatuses", "source"),
        ("containerStatuses", "other"),
    ] {
        let status = container(&pod, field, name);
        assert_eq!(status["restartCount"], 1, "{name}: {status}");
        assert!(
            status["lastState"]["terminated"].is_object(),
            "{name} shows the instance the reset took out: {status}"
        );
    }
    // `source` runs again only once the init container has run twice (it exits 3 otherwise,
    // and the pod fails): the init container ran again before the regular ones.
    assert_eq!(
        container(&pod, "initContainerStatuses", "init")["state"]["terminated"]["exitCode"],
        0
    );
    assert_eq!(condition(&pod, "AllContainersRestarting"), "False");
    assert_eq!(condition(&pod, "Initialized"), "True");

    let _ = watch.kill();
    let _ = watch.wait();
    let values: Vec<String> = seen.try_iter().filter(|v| !v.is_empty()).collect();
    let first_true = values.iter().position(|v| v == "True");
    assert!(
        first_true.is_some_and(|at| values[at..].iter().any(|v| v == "False")),
        "the condition was true during the reset and false after: {values:?}"
    );
    let events = node.events("reset", &uid);
    assert!(
        events.iter().any(|e| e["reason"] == "Killing"
            && e["message"].as_str().is_some_and(|m| m.contains("other"))),
        "the other container was killed by the reset: {events:?}"
    );
}
