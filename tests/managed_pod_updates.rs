//! Updates of running API pods, against the real control plane and containerd, driven with
//! kubectl as the admin: a new image replaces only its container (a Killing event saying the
//! definition changed, a new container ID, restart count one more) and starts at once even
//! while the old image crash-looped in its back-off, a lowered
//! `activeDeadlineSeconds` fails the pod on time, a new label reaches a downwardAPI file; and a
//! volume that cannot be set up is a `FailedMount` event until its config map exists.
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT).

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::managed::{Managed, HTTPD};
use common::node::{container, phase, SHELL};
use common::{wait_for, TestConfig};
use serde_json::Value;

/// The upstream kubelet's periodic sync: a label change shows in the files within it.
const SYNC_PERIOD: Duration = Duration::from_secs(10);
/// A container that exits 1 at once, in the local registry.
const EXIT: &str = "127.0.0.1:5000/sergeant/exit:1.0";
/// How soon a container whose spec changed starts while its old spec was in a crash-loop
/// back-off: well under what was left of that back-off.
const NEW_SPEC_START: Duration = Duration::from_secs(10);

/// A container `name` of image `image` that sleeps.
fn sleeper(name: &str, image: &str) -> String {
    format!("  - name: {name}\n    image: {image}\n    command: [sleep, '3600']\n")
}

/// `field` of the status of container `name`, as text.
fn status_of(pod: &Value, name: &str, field: &str) -> String {
    container(pod, "containerStatuses", name)[field]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn running(pod: &Value, name: &str) -> bool {
    !container(pod, "containerStatuses", name)["state"]["running"].is_null()
}

/// Sets the image of container `name` of pod `pod` to `image`, as an admin would.
fn set_image(node: &Managed, pod: &str, name: &str, image: &str) {
    let (ok, out) = node.cluster.kubectl(&[
        "set",
        "image",
        &format!("pod/{pod}"),
        "-n",
        "default",
        &format!("{name}={image}"),
    ]);
    assert!(ok, "kubectl set image: {out}");
}

fn restarts(pod: &Value, name: &str) -> i64 {
    container(pod, "containerStatuses", name)["restartCount"]
        .as_i64()
        .unwrap_or(-1)
}

#[test]
fn a_new_image_replaces_only_its_container() {
    let node = Managed::start("upd-image", &[]);
    let uid = node.create(
        "upd-image",
        &format!(
            "  containers:\n{}{}",
            sleeper("main", SHELL),
            sleeper("other", SHELL)
        ),
    );
    let before = node.wait_pod("upd-image", "both containers running", |p| {
        running(p, "main") && running(p, "other")
    });
    let (main_id, main_image_id) = (
        status_of(&before, "main", "containerID"),
        status_of(&before, "main", "imageID"),
    );
    let other_id = status_of(&before, "other", "containerID");
    // Counted from before the update: a start retried while the pod came up counts too.
    let main_restarts = restarts(&before, "main");

    set_image(&node, "upd-image", "main", HTTPD);
    let updated = Instant::now();
    let after = node.wait_pod("upd-image", "main replaced and running", |p| {
        running(p, "main") && status_of(p, "main", "containerID") != main_id
    });
    eprintln!(
        "image update to the new container running: {:?}",
        updated.elapsed()
    );
    assert_eq!(status_of(&after, "main", "image"), HTTPD, "{after}");
    assert_ne!(
        status_of(&after, "main", "imageID"),
        main_image_id,
        "the new container runs the new image: {after}"
    );
    assert_eq!(
        restarts(&after, "main"),
        main_restarts + 1,
        "as upstream, one more: {after}"
    );
    let last = &container(&after, "containerStatuses", "main")["lastState"]["terminated"];
    assert_eq!(last["containerID"], main_id.as_str(), "{after}");

    let killing = node.wait_event(("upd-image", &uid), "Killing", |_| true);
    assert_eq!(
        killing["message"], "Container main definition changed, will be restarted",
        "{killing}"
    );
    assert_eq!(
        killing["involvedObject"]["fieldPath"],
        "spec.containers{main}"
    );
    assert_eq!(
        status_of(&after, "other", "containerID"),
        other_id,
        "the other container is not touched: {after}"
    );
    assert_eq!(
        restarts(&after, "other"),
        restarts(&before, "other"),
        "{after}"
    );
    assert_eq!(phase(&after), "Running", "{after}");
}

#[test]
fn a_new_image_starts_at_once_without_the_old_images_crash_loop_back_off() {
    // Upstream's back-off is per container spec (name and hash): a changed spec starts afresh.
    let config = TestConfig::new()
        .kubelet("crashLoopBackOff:\n  maxContainerRestartPeriod: 300s\n")
        .sergeant("crashLoopBackOff:\n  initialPeriod: 10s\n");
    let node = Managed::start_with("pods-upd-backoff", &[], config, &[]);
    node.create(
        "upd-backoff",
        &format!("  containers:\n  - name: main\n    image: {EXIT}\n"),
    );
    // Restarted at once, then after 10 s; now it waits 20 s from its last start.
    let looping = node.wait_pod("upd-backoff", "in its 20 s back-off", |p| {
        let main = container(p, "containerStatuses", "main");
        restarts(p, "main") == 2
            && main["state"]["waiting"]["reason"] == "CrashLoopBackOff"
            && main["state"]["waiting"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("back-off 20s "))
    });
    let exit_image_id = status_of(&looping, "main", "imageID");
    set_image(&node, "upd-backoff", "main", HTTPD);
    let updated = Instant::now();
    // Well inside what is left of the old back-off (about 20 s).
    let after = wait_for("the new image running", NEW_SPEC_START, || {
        node.pod("upd-backoff").filter(|p| running(p, "main"))
    });
    eprintln!(
        "image update to the new container running: {:?}",
        updated.elapsed()
    );
    assert_ne!(
        status_of(&after, "main", "imageID"),
        exit_image_id,
        "the running container is the new image's: {after}"
    );
    assert_eq!(restarts(&after, "main"), 3, "one more: {after}");
}

#[test]
fn a_container_replaced_for_a_new_image_does_not_inherit_the_old_back_off() {
    // The old spec crash-loops up to its 4 s cap; the new image's first crash restarts it at
    // once, as upstream's back-off keyed by the image does. (Before, the restart count carried
    // over from the old image was read as the new one's: 4 s.)
    let config = TestConfig::new()
        .kubelet("crashLoopBackOff:\n  maxContainerRestartPeriod: 4s\n")
        .sergeant("crashLoopBackOff:\n  initialPeriod: 1s\n");
    let node = Managed::start_with("pods-upd-fresh", &[], config, &[]);
    node.create(
        "upd-fresh",
        &format!(
            "  containers:\n  - name: main\n    image: {SHELL}\n    command: [sh, -c, 'sleep 3; exit 1']\n"
        ),
    );
    let old = node.wait_pod("upd-fresh", "running after four restarts", |p| {
        restarts(p, "main") >= 4 && running(p, "main")
    });
    let replaced_at = restarts(&old, "main") + 1;
    set_image(&node, "upd-fresh", "main", HTTPD);
    // Started for the new image (one more restart), crashed after 3 s, restarted (one more).
    let after = node.wait_pod("upd-fresh", "the new image restarted after a crash", |p| {
        container(p, "containerStatuses", "main")["image"] == HTTPD
            && restarts(p, "main") > replaced_at
            && running(p, "main")
    });
    let main = container(&after, "containerStatuses", "main");
    let time = |pointer: &str| {
        let text = main
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default();
        text.parse::<k8s_openapi::jiff::Timestamp>()
            .unwrap_or_else(|e| panic!("{pointer} {text:?}: {e}: {after}"))
            .as_second()
    };
    let waited = time("/state/running/startedAt") - time("/lastState/terminated/finishedAt");
    assert!(
        waited <= 2,
        "the new image's first crash waited {waited} s (the old back-off): {after}"
    );
}

#[test]
fn a_lowered_active_deadline_fails_the_running_pod_on_time() {
    const NEW_DEADLINE: u64 = 5;
    let node = Managed::start("upd-deadline", &[]);
    let created = Instant::now();
    node.create(
        "upd-deadline",
        &format!(
            "  activeDeadlineSeconds: 3600\n  containers:\n{}",
            sleeper("main", SHELL)
        ),
    );
    node.wait_pod("upd-deadline", "running", |p| running(p, "main"));
    let patch = format!("{{\"spec\":{{\"activeDeadlineSeconds\":{NEW_DEADLINE}}}}}");
    let (ok, out) = node.cluster.kubectl(&[
        "patch",
        "pod",
        "upd-deadline",
        "-n",
        "default",
        "-p",
        &patch,
    ]);
    assert!(ok, "kubectl patch: {out}");
    let failed = node.wait_pod("upd-deadline", "Failed", |p| phase(p) == "Failed");
    let took = created.elapsed();
    eprintln!("created to Failed: {took:?}");
    assert_eq!(failed["status"]["reason"], "DeadlineExceeded", "{failed}");
    // Counted from when sergeant first saw the pod (after `created`); reported after the
    // container's 1 s grace period, well before the next periodic sync would have noticed.
    let deadline = Duration::from_secs(NEW_DEADLINE);
    assert!(
        took >= deadline && took < deadline + Duration::from_secs(5),
        "failed {took:?} after creation, deadline {deadline:?}"
    );
}

#[test]
fn a_new_label_reaches_the_downward_api_file() {
    let node = Managed::start("upd-label", &[]);
    let uid = node.create(
        "upd-label",
        &format!(
            "  containers:\n{}    volumeMounts:\n    - {{name: info, mountPath: /info}}\n  \
             volumes:\n  - name: info\n    downwardAPI:\n      items:\n      - path: labels\n        fieldRef: {{fieldPath: metadata.labels}}\n",
            sleeper("main", SHELL)
        ),
    );
    node.wait_pod("upd-label", "running", |p| running(p, "main"));
    // The volume's directory on the node, bind-mounted into the container.
    let file: PathBuf = node
        .agent
        .dir
        .path()
        .join("root/pods")
        .join(&uid)
        .join("volumes/kubernetes.io~downward-api/info/labels");
    let read = || std::fs::read_to_string(&file).unwrap_or_default();
    assert_eq!(read(), format!("sergeant-test=\"{}\"", node.node));

    let labelled = Instant::now();
    let (ok, out) =
        node.cluster
            .kubectl(&["label", "pod", "upd-label", "-n", "default", "tier=web"]);
    assert!(ok, "kubectl label: {out}");
    let updated = wait_for("the new label in the file", SYNC_PERIOD, || {
        Some(read()).filter(|text| text.contains("tier=\"web\""))
    });
    eprintln!("label to file: {:?}", labelled.elapsed());
    assert_eq!(
        updated,
        format!("sergeant-test=\"{}\"\ntier=\"web\"", node.node)
    );
}

#[test]
fn a_missing_config_map_is_a_failed_mount_event_until_it_exists() {
    const CONFIG_MAP: &str = "upd-missing-cfg";
    let node = Managed::start("upd-mount", &[]);
    let delete = || {
        node.cluster.kubectl(&[
            "delete",
            "configmap",
            CONFIG_MAP,
            "-n",
            "default",
            "--ignore-not-found",
        ])
    };
    delete();
    let uid = node.create(
        "upd-mount",
        &format!(
            "  containers:\n{}    volumeMounts:\n    - {{name: cfg, mountPath: /cfg}}\n  \
             volumes:\n  - name: cfg\n    configMap: {{name: {CONFIG_MAP}}}\n",
            sleeper("main", SHELL)
        ),
    );
    let expected = format!(
        "MountVolume.SetUp failed for volume \"cfg\" : configmap \"{CONFIG_MAP}\" not found"
    );
    // The sync retries every second: the repeats are counted on one Event.
    let event = node.wait_event(("upd-mount", &uid), "FailedMount", |e| {
        e["count"].as_i64().unwrap_or(0) > 1
    });
    assert_eq!(event["message"], expected.as_str(), "{event}");
    assert_eq!(event["type"], "Warning");
    assert!(event["involvedObject"]["fieldPath"].is_null(), "{event}");
    let objects = node
        .events("upd-mount", &uid)
        .into_iter()
        .filter(|e| e["reason"] == "FailedMount")
        .count();
    assert_eq!(objects, 1, "repeats are counted on one Event");
    let pod = node.pod("upd-mount").expect("the pod");
    assert_eq!(phase(&pod), "Pending", "{pod}");
    assert_eq!(
        container(&pod, "containerStatuses", "main")["state"]["waiting"]["reason"],
        "ContainerCreating",
        "{pod}"
    );

    node.cluster.apply(&format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {CONFIG_MAP}\n  namespace: default\ndata:\n  key: here\n"
    ));
    node.wait_pod("upd-mount", "running once its config map exists", |p| {
        phase(p) == "Running" && running(p, "main")
    });
    delete();
}
