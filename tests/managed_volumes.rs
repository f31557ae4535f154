//! Volumes and environment from the API server, against the real control plane and the real
//! containerd: configMap, secret (on a tmpfs), downwardAPI and projected volumes written with
//! the atomic `..data` layout and kept current; env from config map and secret keys and
//! `envFrom`; a missing config map holds back only its own pod (`CreateContainerConfigError`,
//! or `ContainerCreating` for a volume) until it is created; and the default service account
//! token volume holds a token the API server accepts, bound to the pod. Reads the Node
//! authorizer refuses for a moment (it learns of a new pod asynchronously) are retried at once
//! and cost neither a `FailedMount` event nor a delay of the pod's start.
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT). Files are read back with `kubectl exec`, so the API server reaches
//! the node's kubelet API as in `kubectl_node_api.rs`.

mod common;

use common::cluster::Cluster;
use common::managed::{Managed, DEADLINE};
use common::node::{container, phase, SHELL};
use common::wait_for;
use serde_json::Value;
use std::time::{Duration, Instant};

/// A managed node whose kubelet API the API server can reach (for `kubectl exec`).
fn node(tag: &str) -> Managed {
    node_with(tag, &[])
}

/// [`node`] with environment `env`.
fn node_with(tag: &str, env: &[(&str, &str)]) -> Managed {
    // A config map update reaches mounted files at the next resync: 10 s keeps the wait short
    // (the upstream default, 1m, plus jitter would exceed the deadline).
    Managed::reachable(&format!("vol-{tag}"), env, "syncFrequency: 10s\n")
}

/// Creates pod `name` running `sleep` in container `main`; like every test pod it keeps the
/// projected kube-api-access volume (token, kube-root-ca.crt, namespace) the admission plugin
/// adds.
fn create_with_service_account(node: &Managed, name: &str) {
    node.create(
        name,
        &format!(
            "  containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n"
        ),
    );
}

/// Config maps and secrets a test made, deleted when it ends (also when it fails).
struct Objects<'a> {
    cluster: &'a Cluster,
    names: Vec<(&'static str, String)>,
}

impl<'a> Objects<'a> {
    fn new(cluster: &'a Cluster) -> Self {
        Self {
            cluster,
            names: Vec::new(),
        }
    }

    /// Applies `manifest` (a ConfigMap or Secret named `name` in `default`), remembering it.
    fn apply(&mut self, kind: &'static str, name: &str, manifest: &str) {
        self.cluster.apply(manifest);
        self.names.push((kind, name.to_owned()));
    }

    /// Deletes leftovers of an interrupted run.
    fn clear(&self, kind: &str, name: &str) {
        self.cluster
            .kubectl(&["delete", kind, name, "-n", "default", "--ignore-not-found"]);
    }
}

impl Drop for Objects<'_> {
    fn drop(&mut self) {
        for (kind, name) in &self.names {
            self.clear(kind, name);
        }
    }
}

/// The output of `sh -c script` in the pod's container, `None` while exec fails.
fn exec(node: &Managed, pod: &str, script: &str) -> Option<String> {
    let (ok, out) = node
        .cluster
        .kubectl(&["exec", pod, "-n", "default", "--", "sh", "-c", script]);
    ok.then_some(out)
}

/// Waits until `sh -c script` in the pod prints `expected`.
fn wait_output(node: &Managed, pod: &str, script: &str, expected: &str) {
    wait_for(
        &format!("{pod}: `{script}` to print {expected:?}"),
        DEADLINE,
        || exec(node, pod, script).filter(|out| out == expected),
    );
}

fn waiting(pod: &Value, name: &str) -> (String, String) {
    let state = &container(pod, "containerStatuses", name)["state"]["waiting"];
    (
        state["reason"].as_str().unwrap_or_default().to_owned(),
        state["message"].as_str().unwrap_or_default().to_owned(),
    )
}

#[test]
fn config_maps_secrets_and_the_downward_api_reach_files_and_env() {
    let node = node("files");
    let mut objects = Objects::new(&node.cluster);
    objects.clear("configmap", "vol-files-cfg");
    objects.clear("secret", "vol-files-sec");
    objects.apply(
        "configmap",
        "vol-files-cfg",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vol-files-cfg\n  namespace: default\ndata:\n  key: first\n  mode: private\n  PLAIN: from-env-from\n",
    );
    objects.apply(
        "secret",
        "vol-files-sec",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: vol-files-sec\n  namespace: default\nstringData:\n  password: s3cret\n",
    );
    node.create(
        "files",
        &format!(
            "  containers:\n  - name: main\n    image: {SHELL}\n    command: [sh, -c, 'echo \"$FROM_SECRET $CFG_PLAIN $OPTIONAL.\"; sleep 3600']\n    \
             env:\n    - name: FROM_SECRET\n      valueFrom:\n        secretKeyRef: {{name: vol-files-sec, key: password}}\n    \
             - name: OPTIONAL\n      valueFrom:\n        configMapKeyRef: {{name: vol-files-cfg, key: absent, optional: true}}\n    \
             envFrom:\n    - prefix: CFG_\n      configMapRef: {{name: vol-files-cfg}}\n    \
             volumeMounts:\n    - {{name: cfg, mountPath: /cfg}}\n    - {{name: sec, mountPath: /sec}}\n    - {{name: info, mountPath: /info}}\n  \
             volumes:\n  - name: cfg\n    configMap:\n      name: vol-files-cfg\n      items:\n      - {{key: key, path: key}}\n      - {{key: mode, path: sub/private, mode: 0400}}\n  \
             - name: sec\n    secret: {{secretName: vol-files-sec, defaultMode: 0440}}\n  \
             - name: info\n    downwardAPI:\n      items:\n      - path: name\n        fieldRef: {{fieldPath: metadata.name}}\n      - path: labels\n        fieldRef: {{fieldPath: metadata.labels}}\n"
        ),
    );
    node.wait_pod("files", "Running", |p| phase(p) == "Running");

    let logs = wait_for("the container's first line", DEADLINE, || {
        let (ok, out) = node.cluster.kubectl(&["logs", "files", "-n", "default"]);
        (ok && !out.is_empty()).then_some(out)
    });
    assert_eq!(
        logs, "s3cret from-env-from .\n",
        "env from the secret, envFrom, optional"
    );

    wait_output(&node, "files", "cat /cfg/key", "first");
    let layout = exec(
        &node,
        "files",
        "readlink /cfg/key; readlink /cfg/..data | cut -c1-4; stat -L -c %a /cfg/sub/private; ls /cfg",
    )
    .expect("exec works");
    assert_eq!(
        layout, "..data/key\n..20\n400\nkey\nsub\n",
        "the atomic layout and item modes"
    );
    let secret = exec(
        &node,
        "files",
        "cat /sec/password; echo; stat -L -c %a /sec/password; grep ' /sec ' /proc/mounts | cut -d' ' -f3",
    )
    .expect("exec works");
    assert_eq!(
        secret, "s3cret\n440\ntmpfs\n",
        "the secret volume, on a tmpfs"
    );
    let info = exec(&node, "files", "cat /info/name; echo; cat /info/labels").expect("exec works");
    assert_eq!(info, format!("files\nsergeant-test=\"{}\"", node.node));
    assert!(
        exec(&node, "files", "touch /cfg/new").is_none(),
        "API volumes are read-only"
    );

    // An update of the config map reaches the file within the sync period (10 s, up to 50 %
    // later with the resync jitter) plus the cache delay: under the Watch strategy (the
    // default) the watch has the new version within moments, so 5 s cover it and the exec.
    let updated = Instant::now();
    objects.apply(
        "configmap",
        "vol-files-cfg",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vol-files-cfg\n  namespace: default\ndata:\n  key: second\n  mode: private\n  PLAIN: from-env-from\n",
    );
    wait_output(&node, "files", "cat /cfg/key", "second");
    let took = updated.elapsed();
    eprintln!("config map update reached the volume in {took:.1?}");
    assert!(
        took <= Duration::from_secs(20),
        "the update took {took:?}, past the sync period with its jitter and the cache delay"
    );
    assert_eq!(
        exec(&node, "files", "ls -a /cfg | grep -c '^\\.\\.20'").as_deref(),
        Some("1\n"),
        "the old version is removed"
    );
}

#[test]
fn a_missing_config_map_holds_back_only_its_pod_until_it_is_created() {
    let node = node("missing");
    let mut objects = Objects::new(&node.cluster);
    objects.clear("configmap", "vol-late");
    let sleeper = |extra: &str| {
        format!(
            "  containers:\n  - name: main\n    image: {SHELL}\n    command: [sh, -c, 'echo \"value=$LATE\"; sleep 3600']\n{extra}"
        )
    };
    node.create(
        "env-waits",
        &sleeper("    env:\n    - name: LATE\n      valueFrom:\n        configMapKeyRef: {name: vol-late, key: value}\n"),
    );
    node.create(
        "volume-waits",
        &sleeper("    volumeMounts:\n    - {name: late, mountPath: /late}\n  volumes:\n  - name: late\n    configMap: {name: vol-late}\n"),
    );
    node.create("unrelated", &sleeper(""));

    node.wait_pod("unrelated", "Running", |p| phase(p) == "Running");
    let pod = node.wait_pod("env-waits", "CreateContainerConfigError", |p| {
        waiting(p, "main").0 == "CreateContainerConfigError"
    });
    let (_, message) = waiting(&pod, "main");
    assert!(
        message.contains("configmap \"vol-late\" not found"),
        "the message names the missing object: {message}"
    );
    let pod = node.wait_pod("volume-waits", "ContainerCreating", |p| {
        waiting(p, "main").0 == "ContainerCreating"
    });
    assert_eq!(phase(&pod), "Pending", "{pod}");
    assert!(
        node.metric("sergeant_volume_setup_failures_total{type=\"configMap\"}")
            .unwrap_or(0.0)
            >= 1.0,
        "the failure is counted"
    );

    objects.apply(
        "configmap",
        "vol-late",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vol-late\n  namespace: default\ndata:\n  value: here\n",
    );
    node.wait_pod("env-waits", "Running", |p| phase(p) == "Running");
    node.wait_pod("volume-waits", "Running", |p| phase(p) == "Running");
    wait_output(&node, "volume-waits", "cat /late/value", "here");
    let logs = wait_for("env-waits' output", DEADLINE, || {
        let (ok, out) = node
            .cluster
            .kubectl(&["logs", "env-waits", "-n", "default"]);
        (ok && !out.is_empty()).then_some(out)
    });
    assert_eq!(logs, "value=here\n");
}

#[test]
fn the_default_service_account_token_is_mounted_and_accepted() {
    let node = node("token");
    create_with_service_account(&node, "token");
    let pod = node.wait_pod("token", "Running", |p| phase(p) == "Running");
    let uid = pod["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let dir = "/var/run/secrets/kubernetes.io/serviceaccount";
    let files = exec(
        &node,
        "token",
        &format!("ls {dir}; cat {dir}/namespace; echo; head -1 {dir}/ca.crt"),
    )
    .expect("exec works");
    assert_eq!(
        files, "ca.crt\nnamespace\ntoken\ndefault\n-----BEGIN CERTIFICATE-----\n",
        "the kube-api-access volume"
    );
    let token = exec(&node, "token", &format!("cat {dir}/token")).expect("exec works");
    assert!(token.starts_with("ey"), "a JWT: {token:?}");

    let review = tempfile::NamedTempFile::new().expect("a temp file");
    let manifest = serde_json::json!({
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenReview",
        "spec": {"token": token},
    });
    std::fs::write(review.path(), manifest.to_string()).expect("review written");
    let path = review.path().to_string_lossy().into_owned();
    let (ok, out) = node.cluster.kubectl(&["create", "-f", &path, "-o", "json"]);
    assert!(ok, "kubectl create tokenreview: {out}");
    let status: Value = serde_json::from_str(&out).expect("JSON");
    let status = &status["status"];
    assert_eq!(status["authenticated"], true, "{status}");
    assert_eq!(
        status["user"]["username"], "system:serviceaccount:default:default",
        "{status}"
    );
    let extra = &status["user"]["extra"];
    assert_eq!(
        extra["authentication.kubernetes.io/pod-name"][0], "token",
        "bound to the pod: {status}"
    );
    assert_eq!(
        extra["authentication.kubernetes.io/pod-uid"][0],
        uid.as_str(),
        "{status}"
    );
}

/// The Node authorizer answers a node's read of an object 403 Forbidden until its graph links
/// the object's pod to the node, which it learns of asynchronously: the first read of a new
/// pod's kube-root-ca.crt can be refused. The failpoint `api::forbidden` refuses the first
/// attempts the same way, since the real race cannot be forced.
#[cfg(feature = "failpoints")]
#[test]
fn reads_refused_for_a_moment_are_retried_without_a_failed_mount_event() {
    /// How soon the pod must run: the refusals are retried within milliseconds, so this is an
    /// ordinary start plus slack for a loaded machine.
    const START_BOUND: Duration = Duration::from_secs(10);

    let node = node_with(
        "forbidden",
        &[(
            "FAILPOINTS",
            "api::forbidden=3*return(no relationship found between node and this object)",
        )],
    );
    let created = Instant::now();
    create_with_service_account(&node, "refused");
    let pod = wait_for("refused: Running", START_BOUND, || {
        node.pod("refused").filter(|p| phase(p) == "Running")
    });
    eprintln!("Running {:?} after its creation", created.elapsed());
    let uid = pod["metadata"]["uid"].as_str().unwrap_or_default();
    // Events are written in order: once Started is there, an earlier FailedMount would be too.
    node.wait_event(("refused", uid), "Started", |_| true);
    let failed_mounts: Vec<Value> = node
        .events("refused", uid)
        .into_iter()
        .filter(|e| e["reason"] == "FailedMount")
        .collect();
    assert!(failed_mounts.is_empty(), "{failed_mounts:#?}");
    let log = node.agent.log();
    assert!(
        log.contains("allowed after 3 Forbidden answers"),
        "the refusals were retried:\n{log}"
    );
}
