//! The kubelet API as users reach it, through the real API server: `kubectl logs` (`-f`,
//! `--previous`), `kubectl exec` with stdin, `kubectl port-forward` moving real bytes, and
//! `kubectl get --raw .../proxy/...`. The API server dials the node's InternalIP and kubelet
//! port with its kubelet client certificate, which sergeant authenticates against the cluster
//! CA and authorizes with a SubjectAccessReview.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::managed::{Managed, DEADLINE, HTTPD};
use common::node::{container, phase, SHELL};
use common::{free_port, wait_for, TestConfig};

/// A managed node the API server can reach: its kubelet API listens on every address and the
/// node reports the address of its default route (the API server refuses to proxy to
/// loopback), trusting the cluster CA for the API server's client certificate.
fn node(tag: &str) -> Managed {
    let cluster = common::cluster::Cluster::from_env();
    let mut config = TestConfig::new().kubelet(&format!(
        "authentication:\n  x509:\n    clientCAFile: {}\n",
        cluster.ca_cert().display()
    ));
    config.address = "0.0.0.0".to_owned();
    Managed::start_with(&format!("kapi-{tag}"), &[], config, &[])
}

fn kubectl(node: &Managed, args: &[&str]) -> String {
    let (ok, out) = node.cluster.kubectl(args);
    assert!(ok, "kubectl {args:?}: {out}");
    out
}

#[test]
fn kubectl_logs_reads_current_followed_and_previous_logs() {
    let node = node("logs");
    // Each run prints its number and exits 1 after printing, so the container restarts.
    node.create(
        "talker",
        &format!(
            "  containers:\n  - name: main\n    image: {SHELL}\n    \
             command: [sh, -c, 'echo run $(date +%s%N); echo second line; sleep 2; exit 1']\n"
        ),
    );
    node.wait_pod("talker", "running", |p| phase(p) == "Running");
    let current = wait_for("two lines", DEADLINE, || {
        let (ok, out) = node.cluster.kubectl(&["logs", "talker", "-n", "default"]);
        (ok && out.lines().count() == 2).then_some(out)
    });
    assert!(
        current.starts_with("run ") && current.ends_with("second line\n"),
        "{current:?}"
    );
    let followed = kubectl(
        &node,
        &["logs", "-f", "talker", "-n", "default", "--limit-bytes=4"],
    );
    assert_eq!(followed, "run ");
    let restarted = node.wait_pod("talker", "restarted", |p| {
        container(p, "containerStatuses", "main")["restartCount"]
            .as_u64()
            .is_some_and(|n| n >= 1)
    });
    let previous = wait_for("the previous run's logs", DEADLINE, || {
        let (ok, out) = node
            .cluster
            .kubectl(&["logs", "--previous", "talker", "-n", "default"]);
        (ok && out.lines().count() == 2).then_some(out)
    });
    assert!(previous.starts_with("run "), "{previous:?} ({restarted})");
}

#[test]
fn kubectl_exec_runs_commands_with_stdin() {
    let node = node("exec");
    node.create(
        "shell",
        &format!(
            "  containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n"
        ),
    );
    node.wait_pod("shell", "running", |p| phase(p) == "Running");
    let out = kubectl(
        &node,
        &[
            "exec",
            "shell",
            "-n",
            "default",
            "--",
            "sh",
            "-c",
            "echo inside $HOSTNAME",
        ],
    );
    assert_eq!(out, "inside shell\n");
    let mut child = Command::new(node.cluster.kubectl_binary())
        .arg("--kubeconfig")
        .arg(node.cluster.admin_kubeconfig())
        .args([
            "exec", "-i", "shell", "-n", "default", "--", "tr", "a-z", "A-Z",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl exec -i runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"through the api server\n")
        .expect("stdin written");
    let out = child.wait_with_output().expect("kubectl exec -i ends");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "THROUGH THE API SERVER\n"
    );
}

#[test]
fn kubectl_port_forward_moves_bytes_to_the_pod() {
    let node = node("forward");
    node.create(
        "web",
        &format!("  containers:\n  - name: web\n    image: {HTTPD}\n"),
    );
    node.wait_pod("web", "running", |p| phase(p) == "Running");
    let local = free_port();
    let mut forward = Command::new(node.cluster.kubectl_binary())
        .arg("--kubeconfig")
        .arg(node.cluster.admin_kubeconfig())
        .args([
            "port-forward",
            "-n",
            "default",
            "pod/web",
            &format!("{local}:8080"),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl port-forward runs");
    let mut ready = BufReader::new(forward.stdout.take().expect("stdout"));
    let mut line = String::new();
    ready
        .read_line(&mut line)
        .expect("kubectl says it forwards");
    assert!(line.starts_with("Forwarding from"), "{line:?}");
    let mut stream = TcpStream::connect(("127.0.0.1", local)).expect("the forwarded port");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("a read timeout");
    stream
        .write_all(b"GET / HTTP/1.0\r\nHost: web\r\n\r\n")
        .expect("request sent");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("answer read");
    let _ = forward.kill();
    let _ = forward.wait();
    assert!(
        answer.starts_with("HTTP/1.") && answer.contains(" 200 OK\r\n"),
        "{answer:?}"
    );
    assert!(answer.ends_with("sergeant-httpd ok\n"), "{answer:?}");
}

#[test]
fn the_api_server_proxies_to_the_node_api() {
    let node = node("proxy");
    let path = format!("/api/v1/nodes/{}/proxy/pods", node.node);
    let pods = wait_for("the node proxy", DEADLINE, || {
        let (ok, out) = node.cluster.kubectl(&["get", "--raw", &path]);
        ok.then_some(out)
    });
    let list: serde_json::Value = serde_json::from_str(&pods).expect("a PodList");
    assert_eq!(list["kind"], "PodList", "{list}");
    let healthz = kubectl(
        &node,
        &[
            "get",
            "--raw",
            &format!("/api/v1/nodes/{}/proxy/healthz", node.node),
        ],
    );
    assert_eq!(healthz.trim(), "ok");
    let summary = kubectl(
        &node,
        &[
            "get",
            "--raw",
            &format!("/api/v1/nodes/{}/proxy/stats/summary", node.node),
        ],
    );
    let summary: serde_json::Value = serde_json::from_str(&summary).expect("a Summary");
    assert_eq!(summary["node"]["nodeName"], node.node.as_str(), "{summary}");
    assert!(
        summary["node"]["memory"]["workingSetBytes"]
            .as_u64()
            .unwrap_or(0)
            > 0,
        "{summary}"
    );
}
