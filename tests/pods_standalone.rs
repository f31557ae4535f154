//! Static pods on the real containerd, start to finish: sergeant in standalone mode runs the
//! manifests of its static pod directory and reports them at `/pods`.
//!
//! Needs the private containerd `tests/run.sh` starts (SERGEANT_CRI_ENDPOINT) and its local
//! registry with the test images.

mod common;

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use common::{wait_for, Agent, TestConfig};
use serde_json::Value;

const POD_DEADLINE: Duration = Duration::from_secs(60);
const SHELL: &str = "127.0.0.1:5000/sergeant/shell:1.0";

/// sergeant with a static pod directory and a fast crash-loop back-off.
struct Node {
    agent: Agent,
    manifests: PathBuf,
    node_name: String,
}

impl Node {
    fn start(tag: &str) -> Self {
        let endpoint = std::env::var("SERGEANT_CRI_ENDPOINT")
            .expect("SERGEANT_CRI_ENDPOINT is not set: run the tests through tests/run.sh, which starts containerd");
        let manifests = tempfile::tempdir().expect("a manifest dir").keep();
        let node_name = format!("node-{tag}");
        let config = TestConfig::new()
            .kubelet(&format!(
                "staticPodPath: {}\ncontainerRuntimeEndpoint: {endpoint}\ncrashLoopBackOff:\n  maxContainerRestartPeriod: 4s\n",
                manifests.display()
            ))
            .sergeant("crashLoopBackOff:\n  initialPeriod: 1s\n");
        let agent = Agent::start_with_args(&config, &[], &["--hostname-override", &node_name]);
        Self {
            agent,
            manifests,
            node_name,
        }
    }

    fn write(&self, file: &str, manifest: &str) {
        let tmp = self.manifests.join(format!(".{file}.tmp"));
        fs::write(&tmp, manifest).expect("manifest written");
        fs::rename(&tmp, self.manifests.join(file)).expect("manifest moved in place");
    }

    fn remove(&self, file: &str) {
        fs::remove_file(self.manifests.join(file)).expect("manifest removed");
    }

    /// The pod `name` (before the node suffix) from `/pods`, if listed.
    fn pod(&self, name: &str) -> Option<Value> {
        let full = format!("{name}-{}", self.node_name);
        let list = self.agent.get_json("/pods");
        list["items"]
            .as_array()?
            .iter()
            .find(|p| p["metadata"]["name"] == full.as_str())
            .cloned()
    }

    fn wait_pod(&self, name: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
        wait_for(&format!("{name}: {what}"), POD_DEADLINE, || {
            self.pod(name).filter(|p| check(p))
        })
    }
}

impl Drop for Node {
    /// Removes every manifest and waits until sergeant has terminated the pods, so no test
    /// leaves containers behind on the shared containerd.
    fn drop(&mut self) {
        if let Ok(entries) = fs::read_dir(&self.manifests) {
            for entry in entries.flatten() {
                let _ = fs::remove_file(entry.path());
            }
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while std::time::Instant::now() < deadline {
            let gone = common::try_get(&format!("{}/pods", self.agent.read_only))
                .ok()
                .and_then(|(_, body)| serde_json::from_str::<Value>(&body).ok())
                .is_some_and(|list| list["items"].as_array().is_some_and(Vec::is_empty));
            if gone {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = fs::remove_dir_all(&self.manifests);
    }
}

fn phase(pod: &Value) -> &str {
    pod["status"]["phase"].as_str().unwrap_or_default()
}

fn container<'a>(pod: &'a Value, field: &str, name: &str) -> &'a Value {
    pod["status"][field]
        .as_array()
        .and_then(|all| all.iter().find(|c| c["name"] == name))
        .unwrap_or(&Value::Null)
}

/// A pod manifest; its grace period is 1 s unless `spec` sets one, so cleanup is quick.
fn manifest(name: &str, spec: &str) -> String {
    let grace = if spec.contains("terminationGracePeriodSeconds") {
        ""
    } else {
        "  terminationGracePeriodSeconds: 1\n"
    };
    format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n{grace}{spec}")
}

#[test]
fn a_static_pod_runs_and_is_reported_running_with_its_ip() {
    let node = Node::start("runs");
    node.write(
        "sleeper.yaml",
        &manifest(
            "sleeper",
            &format!(
                "  containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n"
            ),
        ),
    );
    let pod = node.wait_pod("sleeper", "Running", |p| phase(p) == "Running");
    let main = container(&pod, "containerStatuses", "main");
    assert_eq!(main["ready"], true, "{pod}");
    assert!(main["state"]["running"]["startedAt"].is_string(), "{pod}");
    assert!(
        main["containerID"]
            .as_str()
            .unwrap()
            .starts_with("containerd://"),
        "{pod}"
    );
    assert!(
        pod["status"]["podIP"]
            .as_str()
            .unwrap_or_default()
            .starts_with("10.88."),
        "{pod}"
    );
    assert_eq!(pod["status"]["qosClass"], "BestEffort");
    let ready = pod["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .cloned();
    assert_eq!(ready.unwrap()["status"], "True", "{pod}");
    let (_, metrics) = node.agent.get("/metrics");
    assert!(
        metrics.contains("kubelet_pod_start_duration_seconds_count 1"),
        "{metrics}"
    );
    assert!(metrics.contains("kubelet_running_pods 1"), "{metrics}");
}

#[test]
fn an_init_container_prepares_an_empty_dir_the_app_reads() {
    let node = Node::start("init");
    let spec = format!(
        "  initContainers:\n  - name: prepare\n    image: {SHELL}\n    command: [sh, -c, 'echo ready > /work/flag']\n    volumeMounts:\n    - {{name: work, mountPath: /work}}\n\
         \x20 containers:\n  - name: app\n    image: {SHELL}\n    command: [sh, -c, 'test \"$(cat /work/flag)\" = ready && exec sleep 3600']\n    volumeMounts:\n    - {{name: work, mountPath: /work}}\n\
         \x20 volumes:\n  - name: work\n    emptyDir: {{}}\n"
    );
    node.write("init.yaml", &manifest("init", &spec));
    let pod = node.wait_pod("init", "Running", |p| phase(p) == "Running");
    assert_eq!(
        container(&pod, "containerStatuses", "app")["restartCount"],
        0,
        "the app found the file at once: {pod}"
    );
    let init = container(&pod, "initContainerStatuses", "prepare");
    assert_eq!(init["state"]["terminated"]["exitCode"], 0, "{pod}");
}

#[test]
fn a_crash_looping_container_is_restarted_with_back_off() {
    let node = Node::start("crash");
    node.write(
        "crash.yaml",
        &manifest("crash", &format!("  containers:\n  - name: fails\n    image: {SHELL}\n    command: [sh, -c, 'exit 3']\n")),
    );
    let pod = node.wait_pod("crash", "CrashLoopBackOff after restarts", |p| {
        let c = container(p, "containerStatuses", "fails");
        c["restartCount"].as_u64().unwrap_or(0) >= 2
            && c["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    });
    let fails = container(&pod, "containerStatuses", "fails");
    assert_eq!(fails["lastState"]["terminated"]["exitCode"], 3, "{pod}");
    assert!(
        fails["state"]["waiting"]["message"]
            .as_str()
            .unwrap()
            .starts_with("back-off "),
        "{pod}"
    );
}

#[test]
fn a_never_restarted_pod_that_fails_is_failed() {
    let node = Node::start("never");
    node.write(
        "never.yaml",
        &manifest("never", &format!("  restartPolicy: Never\n  containers:\n  - name: once\n    image: {SHELL}\n    command: [sh, -c, 'exit 4']\n")),
    );
    let pod = node.wait_pod("never", "Failed", |p| phase(p) == "Failed");
    let once = container(&pod, "containerStatuses", "once");
    assert_eq!(once["state"]["terminated"]["exitCode"], 4, "{pod}");
    assert_eq!(once["restartCount"], 0, "{pod}");
}

#[test]
fn a_deleted_manifest_runs_pre_stop_and_the_pod_is_gone_within_its_grace_period() {
    let node = Node::start("delete");
    let host = tempfile::tempdir().expect("a host dir");
    let spec = format!(
        "  terminationGracePeriodSeconds: 3\n  containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n\
         \x20   lifecycle:\n      preStop:\n        exec:\n          command: [sh, -c, 'echo stopping > /host/pre-stop']\n\
         \x20   volumeMounts:\n    - {{name: host, mountPath: /host}}\n  volumes:\n  - name: host\n    hostPath:\n      path: {}\n",
        host.path().display()
    );
    node.write("delete.yaml", &manifest("delete", &spec));
    node.wait_pod("delete", "Running", |p| phase(p) == "Running");
    let removed = std::time::Instant::now();
    node.remove("delete.yaml");
    wait_for("the pod to be gone", Duration::from_secs(15), || {
        node.pod("delete").is_none().then_some(())
    });
    assert!(
        removed.elapsed() < Duration::from_secs(3 + 2 + 5),
        "gone within the grace period (plus detection): {:?}",
        removed.elapsed()
    );
    let pre_stop = fs::read_to_string(host.path().join("pre-stop")).expect("the preStop hook ran");
    assert_eq!(pre_stop.trim(), "stopping");
}

#[test]
fn a_broken_manifest_is_rejected_alone() {
    let node = Node::start("broken");
    node.write("broken.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: broken\nspec:\n  containers:\n  - name: x\n    imagee: nope\n");
    node.write(
        "good.yaml",
        &manifest(
            "good",
            &format!(
                "  containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n"
            ),
        ),
    );
    node.wait_pod("good", "Running", |p| phase(p) == "Running");
    let sources = node.agent.get_json("/debug/sources");
    let rejected = sources["file"]["rejected"]
        .as_array()
        .expect("rejected manifests listed");
    assert_eq!(rejected.len(), 1, "{sources}");
    let error = rejected[0]["error"].as_str().unwrap();
    assert!(
        error.contains("broken.yaml:8") && error.contains("imagee"),
        "{error}"
    );
}

#[test]
fn a_sidecar_keeps_running_while_the_app_restarts() {
    let node = Node::start("sidecar");
    let spec = format!(
        "  initContainers:\n  - name: helper\n    image: {SHELL}\n    restartPolicy: Always\n    command: [sleep, '3600']\n\
         \x20 containers:\n  - name: app\n    image: {SHELL}\n    command: [sh, -c, 'sleep 1; exit 1']\n"
    );
    node.write("sidecar.yaml", &manifest("sidecar", &spec));
    let first = node.wait_pod("sidecar", "the sidecar running", |p| {
        container(p, "initContainerStatuses", "helper")["state"]["running"].is_object()
    });
    let sidecar_id = container(&first, "initContainerStatuses", "helper")["containerID"].clone();
    let later = node.wait_pod("sidecar", "app restarted twice", |p| {
        container(p, "containerStatuses", "app")["restartCount"]
            .as_u64()
            .unwrap_or(0)
            >= 2
    });
    let helper = container(&later, "initContainerStatuses", "helper");
    assert_eq!(
        helper["containerID"], sidecar_id,
        "the sidecar outlived the app's restarts: {later}"
    );
    assert_eq!(helper["restartCount"], 0);
}

#[test]
fn after_kill_9_a_restarted_sergeant_adopts_its_pods_without_restarting_them() {
    let node = Node::start("adopt");
    node.write(
        "adopt.yaml",
        &manifest(
            "adopt",
            &format!(
                "  containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n"
            ),
        ),
    );
    let before = node.wait_pod("adopt", "Running", |p| phase(p) == "Running");
    let id = container(&before, "containerStatuses", "main")["containerID"].clone();
    let mut node = node;
    node.agent.signal(nix::sys::signal::Signal::SIGKILL);
    node.agent.wait_exit(Duration::from_secs(10));
    node.agent.restart_in_place();
    let after = node.wait_pod("adopt", "Running again", |p| phase(p) == "Running");
    let main = container(&after, "containerStatuses", "main");
    assert_eq!(main["containerID"], id, "same container: {after}");
    assert_eq!(main["restartCount"], 0);
}

#[test]
fn termination_messages_come_from_the_file_or_the_log_on_error() {
    let node = Node::start("message");
    let spec = format!(
        "  restartPolicy: Never\n  containers:\n  - name: file\n    image: {SHELL}\n    \
         command: [sh, -c, 'echo written to the file > /dev/termination-log']\n  \
         - name: logs\n    image: {SHELL}\n    terminationMessagePolicy: FallbackToLogsOnError\n    \
         command: [sh, -c, 'echo the last words; exit 2']\n"
    );
    node.write("message.yaml", &manifest("message", &spec));
    let pod = node.wait_pod("message", "both exited", |p| {
        ["file", "logs"]
            .iter()
            .all(|c| container(p, "containerStatuses", c)["state"]["terminated"].is_object())
    });
    let terminated =
        |name| container(&pod, "containerStatuses", name)["state"]["terminated"].clone();
    assert!(
        terminated("file")["message"]
            .as_str()
            .unwrap_or_default()
            .contains("written to the file"),
        "{pod}"
    );
    assert!(
        terminated("logs")["message"]
            .as_str()
            .unwrap_or_default()
            .contains("the last words"),
        "{pod}"
    );
    assert_eq!(terminated("logs")["exitCode"], 2);
}
