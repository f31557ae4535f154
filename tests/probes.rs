//! Probes on real containers in the real containerd: liveness restarts, readiness gates Ready
//! without restarts, startup holds the other two back; exec, httpGet, tcpSocket and grpc handlers
//! against real servers in the containers; the prober metrics on `/metrics/probes`.

mod common;

use common::node::{container, manifest, phase, Node, POD_DEADLINE, SHELL};
use common::wait_for;
use serde_json::Value;

const HTTPD: &str = "127.0.0.1:5000/sergeant/httpd:1.0";
const GRPC_HEALTH: &str = "127.0.0.1:5000/sergeant/grpc-health:1.0";

/// How many `kind` probes of pod `pod` (name before the node suffix) ended with `result`
/// (`successful`, `failed`), from `/metrics/probes`.
fn probes(node: &Node, pod: &str, kind: &str, result: &str) -> u64 {
    let (status, text) = node.agent.get("/metrics/probes");
    assert_eq!(status, 200, "{text}");
    let pod_label = format!("pod=\"{pod}-");
    text.lines()
        .filter(|l| l.starts_with("prober_probe_total{"))
        .filter(|l| {
            l.contains(&pod_label)
                && l.contains(&format!("probe_type=\"{kind}\""))
                && l.contains(&format!("result=\"{result}\""))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

fn ready(pod: &Value, name: &str) -> bool {
    container(pod, "containerStatuses", name)["ready"] == true
}

fn restarts(pod: &Value, name: &str) -> u64 {
    container(pod, "containerStatuses", name)["restartCount"]
        .as_u64()
        .unwrap_or(0)
}

#[test]
fn a_failing_liveness_probe_restarts_the_container() {
    let node = Node::start("liveness");
    let spec = format!(
        "  containers:\n  - name: main\n    image: {SHELL}\n    \
         command: [sh, -c, 'touch /tmp/healthy; sleep 2; rm /tmp/healthy; sleep 3600']\n    \
         livenessProbe:\n      exec: {{command: [cat, /tmp/healthy]}}\n      periodSeconds: 1\n      failureThreshold: 2\n"
    );
    node.write("liveness.yaml", &manifest("liveness", &spec));
    // Every new instance fails its probe again: the count keeps growing, as upstream's
    // conformance spec ("monotonically increasing restart count") expects.
    let pod = node.wait_pod(
        "liveness",
        "restarted three times by its liveness probe",
        |p| restarts(p, "main") >= 3,
    );
    let main = container(&pod, "containerStatuses", "main");
    assert!(
        main["lastState"]["terminated"].is_object(),
        "the killed attempt is the last state: {pod}"
    );
    assert!(probes(&node, "liveness", "Liveness", "failed") >= 2);
}

#[test]
fn a_failing_readiness_probe_keeps_the_pod_unready_and_never_restarts_it() {
    let node = Node::start("readiness");
    let spec = format!(
        "  containers:\n  - name: main\n    image: {HTTPD}\n    \
         readinessProbe:\n      httpGet: {{path: /missing, port: 8080}}\n      periodSeconds: 1\n"
    );
    node.write("readiness.yaml", &manifest("readiness", &spec));
    node.wait_pod("readiness", "Running", |p| phase(p) == "Running");
    wait_for("five failed readiness probes", POD_DEADLINE, || {
        (probes(&node, "readiness", "Readiness", "failed") >= 5).then_some(())
    });
    let pod = node.pod("readiness").expect("the pod is listed");
    assert!(!ready(&pod, "main"), "{pod}");
    assert_eq!(restarts(&pod, "main"), 0, "{pod}");
    let ready_condition = pod["status"]["conditions"]
        .as_array()
        .and_then(|all| all.iter().find(|c| c["type"] == "Ready"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(ready_condition["status"], "False", "{pod}");
}

#[test]
fn http_get_and_tcp_socket_probes_pass_against_the_containers_server() {
    let node = Node::start("handlers");
    let spec = format!(
        "  containers:\n  - name: web\n    image: {HTTPD}\n    ports:\n    - {{name: http, containerPort: 8080}}\n    \
         readinessProbe:\n      httpGet: {{path: /, port: http}}\n      periodSeconds: 1\n    \
         livenessProbe:\n      tcpSocket: {{port: 8080}}\n      periodSeconds: 1\n      failureThreshold: 1\n"
    );
    node.write("handlers.yaml", &manifest("handlers", &spec));
    let pod = node.wait_pod("handlers", "Ready", |p| ready(p, "web"));
    assert_eq!(phase(&pod), "Running");
    wait_for("three passed liveness probes", POD_DEADLINE, || {
        (probes(&node, "handlers", "Liveness", "successful") >= 3).then_some(())
    });
    let pod = node.pod("handlers").expect("the pod is listed");
    assert_eq!(restarts(&pod, "web"), 0, "{pod}");
    assert_eq!(probes(&node, "handlers", "Liveness", "failed"), 0);
}

#[test]
fn a_tcp_liveness_probe_on_a_closed_port_restarts_the_container() {
    let node = Node::start("tcpdead");
    let spec = format!(
        "  containers:\n  - name: web\n    image: {HTTPD}\n    \
         livenessProbe:\n      tcpSocket: {{port: 9999}}\n      periodSeconds: 1\n      failureThreshold: 1\n"
    );
    node.write("tcpdead.yaml", &manifest("tcpdead", &spec));
    node.wait_pod("tcpdead", "restarted by its liveness probe", |p| {
        restarts(p, "web") >= 1
    });
}

#[test]
fn a_startup_probe_holds_liveness_back_until_it_passes() {
    let node = Node::start("startup");
    // Liveness would kill the container at once if it ran before /tmp/started exists.
    let spec = format!(
        "  containers:\n  - name: main\n    image: {SHELL}\n    \
         command: [sh, -c, 'sleep 3; touch /tmp/started; sleep 3600']\n    \
         startupProbe:\n      exec: {{command: [cat, /tmp/started]}}\n      periodSeconds: 1\n      failureThreshold: 30\n    \
         livenessProbe:\n      exec: {{command: [cat, /tmp/started]}}\n      periodSeconds: 1\n      failureThreshold: 1\n"
    );
    node.write("startup.yaml", &manifest("startup", &spec));
    let pod = node.wait_pod("startup", "started", |p| {
        container(p, "containerStatuses", "main")["started"] == true
    });
    assert!(
        probes(&node, "startup", "Startup", "failed") >= 1,
        "the startup probe failed while the app started: {pod}"
    );
    wait_for("two passed liveness probes", POD_DEADLINE, || {
        (probes(&node, "startup", "Liveness", "successful") >= 2).then_some(())
    });
    let pod = node.pod("startup").expect("the pod is listed");
    assert_eq!(restarts(&pod, "main"), 0, "liveness never ran early: {pod}");
    assert_eq!(probes(&node, "startup", "Liveness", "failed"), 0);
}

#[test]
fn after_kill_9_probes_resume_on_the_adopted_containers() {
    let mut node = Node::start("reprobe");
    let spec = format!(
        "  containers:\n  - name: web\n    image: {HTTPD}\n    \
         readinessProbe:\n      httpGet: {{path: /, port: 8080}}\n      periodSeconds: 1\n    \
         livenessProbe:\n      tcpSocket: {{port: 8080}}\n      periodSeconds: 1\n"
    );
    node.write("reprobe.yaml", &manifest("reprobe", &spec));
    let before = node.wait_pod("reprobe", "Ready", |p| ready(p, "web"));
    let id = container(&before, "containerStatuses", "web")["containerID"].clone();
    node.agent.signal(nix::sys::signal::Signal::SIGKILL);
    node.agent.wait_exit(std::time::Duration::from_secs(10));
    node.agent.restart_in_place();
    let after = node.wait_pod("reprobe", "Ready again", |p| ready(p, "web"));
    assert_eq!(
        container(&after, "containerStatuses", "web")["containerID"],
        id,
        "the same container: {after}"
    );
    assert_eq!(restarts(&after, "web"), 0, "{after}");
    wait_for("liveness probes in the new process", POD_DEADLINE, || {
        (probes(&node, "reprobe", "Liveness", "successful") >= 1).then_some(())
    });
}

#[test]
fn grpc_probes_ask_the_health_service_in_the_container() {
    let node = Node::start("grpc");
    let spec = format!(
        "  containers:\n  - name: health\n    image: {GRPC_HEALTH}\n    \
         readinessProbe:\n      grpc: {{port: 9090}}\n      periodSeconds: 1\n  \
         - name: sick\n    image: {GRPC_HEALTH}\n    env: [{{name: PORT, value: '9091'}}]\n    \
         readinessProbe:\n      grpc: {{port: 9091, service: sick}}\n      periodSeconds: 1\n"
    );
    node.write("grpc.yaml", &manifest("grpc", &spec));
    let pod = node.wait_pod("grpc", "the serving container Ready", |p| {
        ready(p, "health")
    });
    assert!(!ready(&pod, "sick"), "{pod}");
    wait_for(
        "failed probes of the NOT_SERVING service",
        POD_DEADLINE,
        || (probes(&node, "grpc", "Readiness", "failed") >= 2).then_some(()),
    );
    let pod = node.pod("grpc").expect("the pod is listed");
    assert!(!ready(&pod, "sick"), "{pod}");
    assert_eq!(restarts(&pod, "sick"), 0, "{pod}");
}
