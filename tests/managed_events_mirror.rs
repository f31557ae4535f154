//! Managed mode's events and mirror pods against the real control plane and containerd: a
//! pod's start shows as upstream's events (Pulled, Created, Started) in the API server, a crash
//! loop is one BackOff event whose count grows (not one object per restart), a failing
//! liveness probe is Unhealthy then Killing — with upstream's message when the container is not
//! restarted (`restartPolicy: Never`) and when it is a sidecar; a static pod gets a mirror pod, created exactly
//! once, that shows its status, comes back when deleted, and goes when the manifest goes.
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT).

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use common::cluster::PodWatch;
use common::managed::{Managed, DEADLINE, HTTPD};
use common::node::{container, phase, SHELL};
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
fn a_probe_redirected_to_another_host_passes_with_a_probe_warning_event() {
    let managed = fast_backoff("pods-events-redirect");
    // Answers every request, once read, with a redirect to another host, as agnhost's
    // /redirect does in upstream's conformance spec.
    let host = tempfile::tempdir().expect("a host dir");
    fs::write(
        host.path().join("answer.sh"),
        "while read -r line; do [ \"${#line}\" -le 1 ] && break; done\n\
         printf 'HTTP/1.1 302 Found\\r\\nLocation: http://0.0.0.0/\\r\\nContent-Length: 36\\r\\n\
         Connection: close\\r\\n\\r\\n<a href=\"http://0.0.0.0/\">Found</a>.'\n",
    )
    .expect("the answering script written");
    let uid = managed.create(
        "events-redirect",
        &format!(
            "  containers:\n  - name: web\n    image: {SHELL}\n    \
             command: [sh, -c, 'while true; do nc -l -p 8080 -e sh /host/answer.sh; done']\n\
             \x20   volumeMounts:\n    - {{name: host, mountPath: /host}}\n\
             \x20   livenessProbe:\n      httpGet: {{path: /redirect, port: 8080}}\n      periodSeconds: 1\n      failureThreshold: 1\n\
             \x20 volumes:\n  - name: host\n    hostPath: {{path: {}}}\n",
            host.path().display()
        ),
    );
    let warning = managed.wait_event(("events-redirect", &uid), "ProbeWarning", |_| true);
    assert_eq!(warning["type"], "Warning", "{warning}");
    assert_eq!(
        warning["message"],
        "Liveness probe warning: Probe terminated redirects, Response body: <a href=\"http://0.0.0.0/\">Found</a>.",
        "{warning}"
    );
    let pod = managed.pod("events-redirect").expect("the pod");
    assert_eq!(
        pod["status"]["containerStatuses"][0]["restartCount"], 0,
        "a redirect elsewhere is a success: {pod}"
    );
}

#[test]
fn a_failing_liveness_probe_is_unhealthy_then_killing() {
    let managed = fast_backoff("pods-events-liveness");
    let uid = managed.create(
        "events-liveness",
        &format!("  containers:\n{}", sleeper("app", FAILING_LIVENESS)),
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

/// A liveness probe that fails from the start, as container spec lines.
const FAILING_LIVENESS: &str = "    livenessProbe:\n      exec:\n        command: [\"false\"]\n      periodSeconds: 1\n      failureThreshold: 2\n";

/// A container `name` that sleeps, with the spec lines `extra` (indented four spaces).
fn sleeper(name: &str, extra: &str) -> String {
    format!("  - name: {name}\n    image: {SHELL}\n    command: [\"sleep\", \"3600\"]\n{extra}")
}

/// Creates the pod `name` from the spec lines `spec`; its first Killing event.
fn first_killing(managed: &Managed, name: &str, spec: &str) -> Value {
    let uid = managed.create(name, spec);
    managed.wait_event((name, &uid), "Killing", |_| true)
}

#[test]
fn a_never_restarted_container_failing_liveness_is_killed_and_not_restarted() {
    let managed = fast_backoff("pods-events-never-liveness");
    let spec = format!(
        "  restartPolicy: Never\n  containers:\n{}{}",
        sleeper("app", FAILING_LIVENESS),
        sleeper("other", "")
    );
    // As upstream: a kill that is not followed by a restart does not say it will be.
    let killing = first_killing(&managed, "events-never", &spec);
    assert_eq!(
        killing["message"], "Container app failed liveness probe",
        "{killing}"
    );
    let pod = managed.wait_pod("events-never", "app killed", |p| {
        container(p, "containerStatuses", "app")["state"]["terminated"].is_object()
    });
    assert_eq!(
        container(&pod, "containerStatuses", "app")["restartCount"],
        0,
        "{pod}"
    );
    assert!(
        container(&pod, "containerStatuses", "other")["state"]["running"].is_object(),
        "the other container runs on: {pod}"
    );
    assert_eq!(phase(&pod), "Running", "{pod}");
}

#[test]
fn a_sidecar_failing_liveness_is_killed_as_an_init_container_and_restarted() {
    let managed = fast_backoff("pods-events-sidecar-liveness");
    let proxy = sleeper(
        "proxy",
        &format!("    restartPolicy: Always\n{FAILING_LIVENESS}"),
    );
    let spec = format!(
        "  restartPolicy: Never\n  initContainers:\n{proxy}  containers:\n{}",
        sleeper("app", "")
    );
    let killing = first_killing(&managed, "events-sidecar", &spec);
    assert_eq!(
        killing["message"], "Init container proxy failed liveness probe",
        "{killing}"
    );
    assert_eq!(
        killing["involvedObject"]["fieldPath"],
        "spec.initContainers{proxy}"
    );
    let restarts =
        |p: &Value, field: &str, name: &str| container(p, field, name)["restartCount"].as_i64();
    let pod = managed.wait_pod("events-sidecar", "the sidecar restarted", |p| {
        restarts(p, "initContainerStatuses", "proxy").is_some_and(|n| n >= 1)
    });
    assert_eq!(
        restarts(&pod, "containerStatuses", "app"),
        Some(0),
        "the app is not touched: {pod}"
    );
    assert_eq!(phase(&pod), "Running", "{pod}");
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

/// How long a new mirror pod is watched once it runs: well past the moment the agent's own
/// watch shows the pod it created and its first status writes, when a second create or a
/// delete and re-create would happen.
const MIRROR_WINDOW: Duration = Duration::from_secs(5);

/// The UIDs `watch` (printing `{.metadata.uid}`) shows until `until`.
fn uids_until(watch: &PodWatch, until: Instant) -> BTreeSet<String> {
    let mut uids = BTreeSet::new();
    loop {
        match watch
            .events
            .recv_timeout(until.saturating_duration_since(Instant::now()))
        {
            Ok((_, uid)) if !uid.is_empty() => {
                uids.insert(uid);
            }
            Ok(_) => {}
            Err(RecvTimeoutError::Timeout) => return uids,
            Err(RecvTimeoutError::Disconnected) => panic!("the pod watch ended"),
        }
    }
}

#[test]
fn a_static_pod_is_mirrored_kept_and_removed() {
    let manifests = tempfile::tempdir().expect("a manifest dir");
    let node = "mirror-events";
    let config =
        TestConfig::new().kubelet(&format!("staticPodPath: {}\n", manifests.path().display()));
    // In place before the agent starts, as on a fresh node: the Node is not registered yet.
    write_manifest(
        manifests.path(),
        "web.yaml",
        &format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels:\n    sergeant-test: {node}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n  - name: web\n    image: {HTTPD}\n"
        ),
    );
    let managed = Managed::start_with(node, &[], config, &[]);
    let mirror_name = format!("web-{node}");
    let watch = managed.cluster.watch_pods(
        &["--field-selector", &format!("metadata.name={mirror_name}")],
        "{.metadata.uid}",
    );
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
    // When sergeant first saw the static pod, as upstream's mirror pods carry it: Go's
    // RFC3339NanoFixed, nine fractional digits (2027-01-31T23:59:59.123456789Z).
    let seen = mirror["metadata"]["annotations"]["kubernetes.io/config.seen"]
        .as_str()
        .unwrap_or_default();
    let fraction = seen.get(20..29).unwrap_or_default();
    assert!(
        seen.len() == 30
            && seen.get(19..20) == Some(".")
            && seen.ends_with('Z')
            && fraction.bytes().all(|b| b.is_ascii_digit()),
        "config.seen {seen:?} in {mirror}"
    );
    assert_eq!(mirror["metadata"]["ownerReferences"][0]["kind"], "Node");
    assert_eq!(mirror["metadata"]["ownerReferences"][0]["name"], node);
    assert_eq!(mirror["spec"]["nodeName"], node);
    let first_uid = mirror["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    // Created exactly once: no other UID (no delete and re-create) and no second create.
    let uids = uids_until(&watch, Instant::now() + MIRROR_WINDOW);
    assert_eq!(
        uids,
        BTreeSet::from([first_uid.clone()]),
        "one mirror pod from creation until {MIRROR_WINDOW:?} after it ran"
    );
    let log = managed.agent.log();
    let creates: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("creating the mirror pod"))
        .collect();
    assert_eq!(creates.len(), 1, "one create call: {creates:#?}");

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
