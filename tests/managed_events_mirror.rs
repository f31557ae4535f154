//! Managed mode's events and mirror pods against the real control plane and containerd: a
//! pod's start shows as upstream's events (Pulled, Created, Started) in the API server, a crash
//! loop is one BackOff event whose count grows (not one object per restart), a failing
//! liveness probe is Unhealthy then Killing; a static pod gets a mirror pod that shows its
//! status, comes back when deleted, and goes when the manifest goes.
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT).

mod common;

use std::fs;
use std::path::Path;

use common::managed::{Managed, DEADLINE, HTTPD};
use common::node::{phase, SHELL};
use common::{wait_for, TestConfig};
use serde_json::Value;

/// A managed node whose crash-loop back-off is short (1 s doubling to 4 s).
fn fast_backoff(node: &str) -> Managed {
    let config = TestConfig::new()
        .kubelet("crashLoopBackOff:\n  maxContainerRestartPeriod: 4s\n")
        .sergeant("crashLoopBackOff:\n  initialPeriod: 1s\n");
    Managed::start_with(node, &[], config, &[])
}

#[test]
fn a_pods_start_shows_as_upstreams_events() {
    let managed = Managed::start("events-start", &[]);
    let uid = managed.create(
        "events-web",
        &format!("  containers:\n  - name: web\n    image: {HTTPD}\n"),
    );
    managed.wait_pod("events-web", "running", |p| phase(p) == "Running");
    let pulled = managed.wait_event(("events-web", &uid), "Pulled", |_| true);
    let message = pulled["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(HTTPD)
            && (message.starts_with("Successfully pulled image")
                || message.ends_with("already present on machine")),
        "{pulled}"
    );
    let created = managed.wait_event(("events-web", &uid), "Created", |_| true);
    assert_eq!(created["message"], "Created container: web");
    let started = managed.wait_event(("events-web", &uid), "Started", |_| true);
    assert_eq!(started["message"], "Started container web");
    assert_eq!(started["type"], "Normal");
    assert_eq!(started["involvedObject"]["kind"], "Pod");
    assert_eq!(
        started["involvedObject"]["fieldPath"],
        "spec.containers{web}"
    );
    assert_eq!(started["source"]["component"], "kubelet");
    assert_eq!(started["source"]["host"], managed.node.as_str());
    assert_eq!(started["reportingComponent"], "kubelet");
    assert_eq!(started["reportingInstance"], managed.node.as_str());
}

#[test]
fn a_crash_loop_is_one_back_off_event_whose_count_grows() {
    let managed = fast_backoff("pods-events-crash");
    let uid = managed.create(
        "events-crash",
        &format!(
            "  containers:\n  - name: crash\n    image: {SHELL}\n    command: [\"sh\", \"-c\", \"exit 1\"]\n"
        ),
    );
    let back_off = managed.wait_event(("events-crash", &uid), "BackOff", |e| {
        e["count"].as_i64().unwrap_or(0) > 1
    });
    let message = back_off["message"].as_str().unwrap_or_default();
    assert!(
        message
            .starts_with("Back-off restarting failed container crash in pod events-crash_default("),
        "{back_off}"
    );
    assert_eq!(back_off["type"], "Warning");
    managed.wait_pod("events-crash", "restarted twice", |p| {
        p["status"]["containerStatuses"][0]["restartCount"]
            .as_i64()
            .is_some_and(|n| n >= 2)
    });
    let objects = managed
        .events("events-crash", &uid)
        .into_iter()
        .filter(|e| e["reason"] == "BackOff")
        .count();
    assert_eq!(objects, 1, "repeats are counted on one Event");
}

#[test]
fn a_failing_liveness_probe_is_unhealthy_then_killing() {
    let managed = fast_backoff("pods-events-liveness");
    let uid = managed.create(
        "events-liveness",
        &format!(
            "  containers:\n  - name: app\n    image: {SHELL}\n    command: [\"sleep\", \"3600\"]\n    livenessProbe:\n      exec:\n        command: [\"false\"]\n      periodSeconds: 1\n      failureThreshold: 2\n"
        ),
    );
    let unhealthy = managed.wait_event(("events-liveness", &uid), "Unhealthy", |_| true);
    let message = unhealthy["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("Liveness probe failed:"), "{unhealthy}");
    assert_eq!(
        unhealthy["involvedObject"]["fieldPath"],
        "spec.containers{app}"
    );
    let killing = managed.wait_event(("events-liveness", &uid), "Killing", |e| {
        e["message"] == "Container app failed liveness probe, will be restarted"
    });
    assert_eq!(killing["type"], "Normal");
}

/// Puts a manifest in place atomically, so it is never read half-written.
fn write_manifest(dir: &Path, file: &str, text: &str) {
    let tmp = dir.join(format!(".{file}.tmp"));
    fs::write(&tmp, text).expect("manifest written");
    fs::rename(&tmp, dir.join(file)).expect("manifest moved in place");
}

fn is_mirror_of(pod: &Value, hash: &str) -> bool {
    pod["metadata"]["annotations"]["kubernetes.io/config.mirror"] == hash
}

#[test]
fn a_static_pod_is_mirrored_kept_and_removed() {
    let manifests = tempfile::tempdir().expect("a manifest dir");
    let node = "mirror-events";
    let config =
        TestConfig::new().kubelet(&format!("staticPodPath: {}\n", manifests.path().display()));
    let managed = Managed::start_with(node, &[], config, &[]);
    write_manifest(
        manifests.path(),
        "web.yaml",
        &format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels:\n    sergeant-test: {node}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n  - name: web\n    image: {HTTPD}\n"
        ),
    );
    let mirror_name = format!("web-{node}");
    let mirror = managed.wait_pod(&mirror_name, "a running mirror pod", |p| {
        p["metadata"]["annotations"]["kubernetes.io/config.mirror"].is_string()
            && phase(p) == "Running"
    });
    let hash = mirror["metadata"]["annotations"]["kubernetes.io/config.hash"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(is_mirror_of(&mirror, &hash), "{mirror}");
    assert_eq!(
        mirror["metadata"]["annotations"]["kubernetes.io/config.source"],
        "file"
    );
    assert_eq!(mirror["metadata"]["ownerReferences"][0]["kind"], "Node");
    assert_eq!(mirror["metadata"]["ownerReferences"][0]["name"], node);
    assert_eq!(mirror["spec"]["nodeName"], node);
    let first_uid = mirror["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_owned();

    let (ok, out) = managed.cluster.kubectl(&[
        "delete",
        "pod",
        &mirror_name,
        "-n",
        "default",
        "--wait=false",
    ]);
    assert!(ok, "kubectl delete: {out}");
    let again = managed.wait_pod(&mirror_name, "the mirror pod made again, running", |p| {
        p["metadata"]["uid"] != first_uid.as_str()
            && p["metadata"]["deletionTimestamp"].is_null()
            && is_mirror_of(p, &hash)
            && phase(p) == "Running"
    });
    assert_eq!(again["spec"]["containers"][0]["name"], "web");

    fs::remove_file(manifests.path().join("web.yaml")).expect("manifest removed");
    wait_for("the mirror pod to go with its manifest", DEADLINE, || {
        managed.pod(&mirror_name).is_none().then_some(())
    });
}
