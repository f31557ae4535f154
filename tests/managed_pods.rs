//! Managed mode's pods against the real control plane and the real containerd: pods bound to
//! the node run and report their status to the API server (quickly, and never an older status
//! over a newer one), graceful deletion stops them within the grace period and removes them
//! from the API, and pods whose containers exit end Succeeded or Failed, their volumes torn
//! down while their objects stay.
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT). Pods are bound with `spec.nodeName` directly: no scheduler involved.

mod common;

use std::time::{Duration, Instant, UNIX_EPOCH};

use common::managed::{Managed, DEADLINE, HTTPD};
use common::node::{condition, container, phase, SHELL};
use common::runtime::Runtime;
use common::wait_for;

/// When the runtime started container `id` (CRI `startedAt`, nanosecond precision).
fn cri_started_at(id: &str) -> u128 {
    u128::try_from(Runtime::connect().container_status(id).started_at).unwrap_or(0)
}

#[test]
fn an_api_pod_runs_and_its_status_reaches_the_api_server_quickly() {
    let node = Managed::start("run", &[]);
    let name = "web";
    // Each event shows the first container's `running.startedAt` (empty while not running).
    let watch = node.cluster.watch_pods(
        &["--field-selector", &format!("metadata.name={name}")],
        "{.status.containerStatuses[0].state.running.startedAt}",
    );
    let uid = node.create(
        name,
        &format!(
            "  containers:\n  - name: httpd\n    image: {HTTPD}\n    readinessProbe:\n      httpGet:\n        port: 8080\n      periodSeconds: 1\n"
        ),
    );
    let pod = node.wait_pod(name, "Running and Ready", |p| {
        phase(p) == "Running" && condition(p, "Ready") == "True"
    });
    assert_eq!(
        pod["metadata"]["uid"],
        uid.as_str(),
        "the pod keeps its UID"
    );
    let ip = pod["status"]["podIP"].as_str().unwrap_or_default();
    assert!(!ip.is_empty(), "a pod IP: {pod}");
    for kind in ["Initialized", "ContainersReady", "PodScheduled"] {
        assert_eq!(condition(&pod, kind), "True", "{kind}: {pod}");
    }
    let httpd = container(&pod, "containerStatuses", "httpd");
    let id = httpd["containerID"].as_str().unwrap_or_default();
    assert!(id.starts_with("containerd://"), "containerID: {httpd}");
    assert!(
        !httpd["imageID"].as_str().unwrap_or_default().is_empty(),
        "imageID: {httpd}"
    );
    assert_eq!(httpd["started"], true, "{httpd}");
    assert_eq!(httpd["ready"], true, "{httpd}");
    assert!(
        httpd["state"]["running"]["startedAt"].is_string(),
        "{httpd}"
    );

    // The first watch event that shows the container running, against the runtime's start.
    let started = cri_started_at(id.trim_start_matches("containerd://"));
    let seen = wait_for("the watch to show the container running", DEADLINE, || {
        watch
            .events
            .try_iter()
            .find(|(_, running)| !running.is_empty())
    })
    .0
    .duration_since(UNIX_EPOCH)
    .unwrap_or_default()
    .as_nanos();
    drop(watch);
    let latency =
        Duration::from_nanos(u64::try_from(seen.saturating_sub(started)).unwrap_or(u64::MAX));
    println!("container start → visible to an API watcher: {latency:?} (target 100ms)");
    assert!(
        latency < Duration::from_secs(1),
        "the start took {latency:?} to reach an API watcher"
    );
    assert!(
        node.metric("kubelet_pod_status_sync_duration_seconds_count")
            .unwrap_or(0.0)
            >= 1.0,
        "the sync duration is recorded"
    );
    assert!(
        node.metric("sergeant_pod_status_patches_total{result=\"success\"}")
            .unwrap_or(0.0)
            >= 1.0,
        "patches are counted"
    );
    let sources = node.agent.get_json("/debug/sources");
    assert_eq!(sources["api"]["synced"], true, "{sources}");
    assert_eq!(sources["api"]["pods"][0], "default/web", "{sources}");
}

#[test]
fn kubectl_delete_stops_the_pod_within_its_grace_period_and_removes_it() {
    let node = Managed::start("delete", &[]);
    let name = "stubborn";
    // sh as PID 1 ignores SIGTERM: the container only stops when the grace period ends.
    let uid = node.create(
        name,
        &format!(
            "  terminationGracePeriodSeconds: 2\n  containers:\n  - name: sleeper\n    image: {SHELL}\n    command: [\"sh\", \"-c\", \"trap '' TERM; while true; do sleep 1; done\"]\n"
        ),
    );
    node.wait_pod(name, "Running", |p| phase(p) == "Running");
    let asked = Instant::now();
    let (ok, out) = node
        .cluster
        .kubectl(&["delete", "pod", name, "-n", "default", "--wait=false"]);
    assert!(ok, "kubectl delete: {out}");
    wait_for("the pod to be removed from the API", DEADLINE, || {
        node.pod(name).is_none().then_some(())
    });
    let took = asked.elapsed();
    println!("graceful deletion with a 2s grace period took {took:?}");
    assert!(
        took >= Duration::from_millis(1900),
        "the grace period was honoured, not cut short: {took:?}"
    );
    assert!(took < Duration::from_secs(12), "deleted in time: {took:?}");
    let sandboxes = Runtime::connect().sandboxes(&[("io.kubernetes.pod.uid", &uid)]);
    assert!(sandboxes.is_empty(), "sandboxes left: {sandboxes:?}");
}

#[test]
fn pods_whose_containers_exit_end_succeeded_or_failed_and_their_volumes_are_freed() {
    let node = Managed::start("exit", &[]);
    let mut uids = Vec::new();
    for (name, code) in [("done", 0), ("broken", 3)] {
        uids.push(node.create(
            name,
            &format!(
                "  restartPolicy: Never\n  containers:\n  - name: job\n    image: {SHELL}\n    \
                 command: [\"sh\", \"-c\", \"head -c 1048576 /dev/zero > /scratch/file; exit {code}\"]\n    \
                 volumeMounts:\n    - {{name: scratch, mountPath: /scratch}}\n  volumes:\n  - {{name: scratch, emptyDir: {{}}}}\n"
            ),
        ));
    }
    let done = node.wait_pod("done", "Succeeded", |p| phase(p) == "Succeeded");
    let job = container(&done, "containerStatuses", "job");
    assert_eq!(job["state"]["terminated"]["exitCode"], 0, "{job}");
    let broken = node.wait_pod("broken", "Failed", |p| phase(p) == "Failed");
    let job = container(&broken, "containerStatuses", "job");
    assert_eq!(job["state"]["terminated"]["exitCode"], 3, "{job}");
    assert_eq!(condition(&broken, "Ready"), "False", "{broken}");
    // A finished pod's volumes go while its object stays (as upstream's): the emptyDir's space
    // comes back before anyone deletes the pod.
    for (name, uid) in ["done", "broken"].iter().zip(&uids) {
        let volumes = node
            .agent
            .dir
            .path()
            .join("root/pods")
            .join(uid)
            .join("volumes");
        wait_for(&format!("{name}'s volumes torn down"), DEADLINE, || {
            (!volumes.exists()).then_some(())
        });
        assert!(node.pod(name).is_some(), "{name}'s object is still there");
    }
}

#[test]
fn a_failed_patch_is_retried_with_the_newest_status() {
    // The first patch fails: while it backs off, the pod moves on twice (running, then
    // exited); the retry must write the newest status, never the one that failed.
    let node = Managed::start(
        "newest",
        &[("FAILPOINTS", "status-manager::patch=1*return(injected)")],
    );
    node.create(
        "quick",
        &format!(
            "  restartPolicy: Never\n  containers:\n  - name: job\n    image: {SHELL}\n    command: [\"sh\", \"-c\", \"sleep 0.2; exit 0\"]\n"
        ),
    );
    let pod = node.wait_pod("quick", "Succeeded", |p| phase(p) == "Succeeded");
    let job = container(&pod, "containerStatuses", "job");
    assert_eq!(job["state"]["terminated"]["reason"], "Completed", "{job}");
    assert!(
        node.metric("sergeant_pod_status_patches_total{result=\"error\"}")
            .unwrap_or(0.0)
            >= 1.0,
        "the injected failure was counted"
    );
    // Another change (a second pod) is written after the retry, and the first stays at its end.
    node.create(
        "after",
        &format!(
            "  containers:\n  - name: c\n    image: {SHELL}\n    command: [\"sleep\", \"3600\"]\n"
        ),
    );
    node.wait_pod("after", "Running", |p| phase(p) == "Running");
    assert_eq!(phase(&node.pod("quick").expect("still there")), "Succeeded");
}
