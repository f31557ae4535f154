//! Image pull secrets against the real control plane, the real containerd and a registry that
//! wants credentials (`deploy/node-env/node-env.sh` runs it on 127.0.0.1:5001, user `sergeant`,
//! password `pull-secret-test`, holding only [`PRIVATE`]): a pod whose image is only there runs
//! when its `imagePullSecrets` hold the credentials — the most specific location is tried
//! first, and the next after the registry refused it — and waits in `ErrImagePull` /
//! `ImagePullBackOff` when they do not, with the node's other pods undisturbed. A pull secret
//! that does not exist is named in a `FailedToRetrieveImagePullSecret` event.
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT).

mod common;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use common::managed::Managed;
use common::node::{container, phase, SHELL};
use common::runtime::Runtime;
use serde_json::Value;

/// The image only the registry with credentials holds.
const PRIVATE: &str = "127.0.0.1:5001/sergeant/private/shell:1.0";
/// That registry's user and password.
const CREDENTIALS: (&str, &str) = ("sergeant", "pull-secret-test");

/// Creates (or replaces) secret `name` in `default` of `secret_type` whose key `key` holds
/// `content`.
fn create_secret(managed: &Managed, name: &str, secret_type: &str, key: &str, content: &Value) {
    let encoded = STANDARD.encode(content.to_string());
    managed.cluster.apply(&format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\n  namespace: default\ntype: {secret_type}\ndata:\n  {key}: {encoded}\n"
    ));
}

/// Creates (or replaces) the `kubernetes.io/dockerconfigjson` secret `name` giving the
/// registry user `password` at `location`.
fn create_password_secret(managed: &Managed, name: &str, location: &str, password: &str) {
    let config = serde_json::json!({"auths": {location: {
        "username": CREDENTIALS.0, "password": password}}});
    create_secret(
        managed,
        name,
        "kubernetes.io/dockerconfigjson",
        ".dockerconfigjson",
        &config,
    );
}

fn delete_secrets(managed: &Managed, names: &[&str]) {
    let mut args = vec!["delete", "secret", "-n", "default", "--ignore-not-found"];
    args.extend_from_slice(names);
    managed.cluster.kubectl(&args);
}

/// The spec of a pod running `image` (pulled per `policy`) with `secrets` as its
/// `imagePullSecrets`.
fn pod_spec(image: &str, policy: &str, secrets: &[&str]) -> String {
    let pull_secrets: String = secrets
        .iter()
        .map(|name| format!("  - name: {name}\n"))
        .collect();
    format!(
        "  imagePullSecrets:\n{pull_secrets}  containers:\n  - name: main\n    image: {image}\n    imagePullPolicy: {policy}\n    command: [sleep, '3600']\n"
    )
}

fn waiting_reason(pod: &Value) -> &str {
    container(pod, "containerStatuses", "main")["state"]["waiting"]["reason"]
        .as_str()
        .unwrap_or_default()
}

#[test]
fn a_pod_pulls_its_private_image_with_its_pull_secrets() {
    let managed = Managed::start("pull-secrets-ok", &[]);
    let (wrong, right) = ("pull-secrets-ok-wrong", "pull-secrets-ok-right");
    // The most specific location has a wrong password and is tried first, though its secret
    // comes second in the pod; the registry-wide one, in the legacy format with `auth`, has
    // the right one.
    create_password_secret(&managed, wrong, "127.0.0.1:5001/sergeant/private", "wrong");
    let auth = STANDARD.encode(format!("{}:{}", CREDENTIALS.0, CREDENTIALS.1));
    let host_wide = serde_json::json!({"http://127.0.0.1:5001": {"auth": auth}});
    create_secret(
        &managed,
        right,
        "kubernetes.io/dockercfg",
        ".dockercfg",
        &host_wide,
    );
    // No pod of this test binary uses the image with IfNotPresent but this one: without it
    // on the node, the start needs a real pull.
    Runtime::connect().remove_image(PRIVATE);

    let name = "pull-secrets-ok";
    let uid = managed.create(name, &pod_spec(PRIVATE, "IfNotPresent", &[right, wrong]));
    managed.wait_pod(name, "running", |p| {
        phase(p) == "Running" && container(p, "containerStatuses", "main")["ready"] == true
    });
    let pulled = managed.wait_event((name, &uid), "Pulled", |_| true);
    let message = pulled["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(&format!("Successfully pulled image \"{PRIVATE}\"")),
        "{pulled}"
    );
    assert!(
        managed
            .events(name, &uid)
            .iter()
            .all(|e| e["type"] == "Normal"),
        "a refused credential that another one makes up for is no warning: {:#?}",
        managed.events(name, &uid)
    );
    let log = managed.agent.log();
    let refused = log
        .lines()
        .find(|l| l.contains("pull with these credentials failed"))
        .unwrap_or_else(|| panic!("no refused attempt logged:\n{log}"));
    assert!(
        refused.contains(&format!("default/{wrong}")) && refused.contains(PRIVATE),
        "the specific location is tried first: {refused}"
    );
    delete_secrets(&managed, &[wrong, right]);
}

#[test]
fn without_the_right_credentials_the_pull_fails_and_nothing_else_does() {
    let managed = Managed::start("pull-secrets-denied", &[]);
    let wrong = "pull-secrets-denied-wrong";
    create_password_secret(&managed, wrong, "127.0.0.1:5001", "not-the-password");
    // `Always`: even if another test put the image on the node, these pods must pull it.
    let refused = "pull-secrets-refused";
    let refused_uid = managed.create(refused, &pod_spec(PRIVATE, "Always", &[wrong]));
    let missing = "pull-secrets-missing";
    let absent = "pull-secrets-absent";
    let missing_uid = managed.create(missing, &pod_spec(PRIVATE, "Always", &[absent]));
    let public = "pull-secrets-public";
    managed.create(public, &pod_spec(SHELL, "IfNotPresent", &[]));

    for (name, uid) in [(refused, &refused_uid), (missing, &missing_uid)] {
        managed.wait_pod(name, "waiting on its image", |p| {
            matches!(waiting_reason(p), "ErrImagePull" | "ImagePullBackOff")
        });
        let failed = managed.wait_event((name, uid), "Failed", |e| {
            e["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("Failed to pull image"))
        });
        let message = failed["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(PRIVATE) && message.contains("401 Unauthorized"),
            "{name}: the registry refused the pull: {failed}"
        );
    }
    let retrieve = managed.wait_event(
        (missing, &missing_uid),
        "FailedToRetrieveImagePullSecret",
        |_| true,
    );
    assert_eq!(
        retrieve["message"],
        format!("Unable to retrieve some image pull secrets ({absent}); attempting to pull the image may not succeed.")
    );
    assert_eq!(retrieve["type"], "Warning");
    assert_eq!(retrieve["involvedObject"]["fieldPath"], Value::Null);
    assert!(
        managed
            .events(refused, &refused_uid)
            .iter()
            .all(|e| e["reason"] != "FailedToRetrieveImagePullSecret"),
        "a secret that was read is not reported missing"
    );

    let running = managed.wait_pod(public, "running", |p| phase(p) == "Running");
    assert_eq!(
        container(&running, "containerStatuses", "main")["restartCount"],
        0
    );
    for name in [refused, missing] {
        let pod = managed.pod(name).expect("the pod exists");
        assert_eq!(phase(&pod), "Pending", "{name}");
        assert!(
            matches!(waiting_reason(&pod), "ErrImagePull" | "ImagePullBackOff"),
            "{name}: {}",
            pod["status"]
        );
    }
    let (status, _) = managed.agent.get("/healthz");
    assert_eq!(status, 200);
    delete_secrets(&managed, &[wrong]);
}
