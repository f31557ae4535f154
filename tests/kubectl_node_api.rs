//! The kubelet API as users reach it, through the real API server: `kubectl logs` (`-f`,
//! `--previous`), `kubectl exec` with stdin, `kubectl attach` to a container's own streams
//! (`stdin`, `tty`, `stdinOnce`), `kubectl port-forward` moving real bytes, and
//! `kubectl get --raw .../proxy/...`. The API server dials the node's InternalIP and kubelet
//! port with its kubelet client certificate, which sergeant authenticates against the cluster
//! CA and authorizes with a SubjectAccessReview.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use common::managed::{Managed, DEADLINE, HTTPD};
use common::node::{container, phase, SHELL};
use common::{free_port, wait_for};

/// A managed node the API server can reach: its kubelet API listens on every address and the
/// node reports the address of its default route (the API server refuses to proxy to
/// loopback), trusting the cluster CA for the API server's client certificate.
fn node(tag: &str) -> Managed {
    Managed::reachable(&format!("kapi-{tag}"), &[], "")
}

fn kubectl(node: &Managed, args: &[&str]) -> String {
    let (ok, out) = node.cluster.kubectl(args);
    assert!(ok, "kubectl {args:?}: {out}");
    out
}

/// kubectl as the admin with `args`, its standard streams piped, for the long-running
/// commands (exec -i, attach, port-forward) a test talks to while they run.
fn kubectl_piped(node: &Managed, args: &[&str]) -> Child {
    Command::new(node.cluster.kubectl_binary())
        .arg("--kubeconfig")
        .arg(node.cluster.admin_kubeconfig())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("kubectl {args:?} runs: {e}"))
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
    let mut child = kubectl_piped(
        &node,
        &[
            "exec", "-i", "shell", "-n", "default", "--", "tr", "a-z", "A-Z",
        ],
    );
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

/// A running `kubectl attach -i`: its input, and its output as it arrives.
struct Attached {
    child: Child,
    chunks: mpsc::Receiver<String>,
    reader: JoinHandle<()>,
    seen: String,
}

impl Attached {
    fn start(node: &Managed, pod: &str, container: &str) -> Self {
        let mut child = kubectl_piped(
            node,
            &["attach", "-i", pod, "-c", container, "-n", "default"],
        );
        let mut stdout = child.stdout.take().expect("stdout");
        let (sender, chunks) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(read @ 1..) = stdout.read(&mut buffer) {
                let chunk = String::from_utf8_lossy(&buffer[..read]).into_owned();
                if sender.send(chunk).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            chunks,
            reader,
            seen: String::new(),
        }
    }

    fn send(&mut self, text: &str) {
        let stdin = self.child.stdin.as_mut().expect("stdin still open");
        stdin.write_all(text.as_bytes()).expect("input written");
        stdin.flush().expect("input flushed");
    }

    /// Everything printed so far, once it contains `wanted`.
    fn wait_output(&mut self, wanted: &str) -> String {
        wait_for(&format!("{wanted:?} from kubectl attach"), DEADLINE, || {
            while let Ok(chunk) = self.chunks.try_recv() {
                self.seen.push_str(&chunk);
            }
            self.seen.contains(wanted).then(|| self.seen.clone())
        })
    }

    /// Closes the input and waits for kubectl to end: its status, whole output and errors.
    fn finish(mut self) -> (ExitStatus, String, String) {
        drop(self.child.stdin.take());
        let status = wait_for("kubectl attach to end", DEADLINE, || {
            self.child.try_wait().expect("kubectl attach's status")
        });
        self.reader.join().expect("the output reader");
        self.seen.extend(self.chunks.try_iter());
        let mut errors = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            stderr.read_to_string(&mut errors).expect("stderr read");
        }
        (status, self.seen, errors)
    }
}

#[test]
fn kubectl_attach_reaches_a_containers_own_stdin_and_tty() {
    let node = node("attach");
    node.create(
        "attached",
        &format!(
            "  containers:\n  - name: main\n    image: {SHELL}\n    stdin: true\n    \
             command: [sh, -c, 'while read line; do echo \"got $line\"; done']\n  \
             - name: term\n    image: {SHELL}\n    stdin: true\n    tty: true\n    \
             command: [sh, -c, 'read line; echo \"tty got $line\"; sleep 3600']\n  \
             - name: quiet\n    image: {SHELL}\n    command: [sleep, '3600']\n"
        ),
    );
    node.wait_pod("attached", "running", |p| phase(p) == "Running");

    // Input reaches the running shell and its answer comes back; ending the session detaches
    // without closing the container's input, so a second session is served the same way.
    for word in ["hello", "again"] {
        let mut session = Attached::start(&node, "attached", "main");
        session.send(&format!("{word}\n"));
        session.wait_output(&format!("got {word}\n"));
        let (status, _, errors) = session.finish();
        assert!(status.success(), "{status}: {errors}");
    }
    let logs = kubectl(&node, &["logs", "attached", "-c", "main", "-n", "default"]);
    assert_eq!(logs, "got hello\ngot again\n");
    let pod = node.pod("attached").expect("the pod");
    assert_eq!(phase(&pod), "Running", "{pod}");
    assert_eq!(
        container(&pod, "containerStatuses", "main")["restartCount"],
        0,
        "{pod}"
    );

    // A terminal is the container's choice, not the client's: kubectl's input is a pipe, yet
    // the answer comes back through the container's terminal (which echoes the input).
    let mut session = Attached::start(&node, "attached", "term");
    session.send("typed\n");
    let shown = session.wait_output("tty got typed");
    assert!(shown.contains("tty got typed\r\n"), "{shown:?}");
    let _ = session.finish();

    // A container created without stdin has no input: attaching one is refused, saying why.
    let (ok, refused) = node
        .cluster
        .kubectl(&["attach", "-i", "attached", "-c", "quiet", "-n", "default"]);
    assert!(!ok, "{refused}");
    assert!(
        refused.contains(
            "container \"quiet\" in pod default/attached was not created with stdin: true"
        ),
        "{refused}"
    );
}

#[test]
fn kubectl_attach_to_a_stdin_once_container_closes_its_input_when_the_session_ends() {
    let node = node("attach-once");
    node.create(
        "once",
        &format!(
            "  restartPolicy: Never\n  containers:\n  - name: main\n    image: {SHELL}\n    \
             stdin: true\n    stdinOnce: true\n    command: [tr, a-z, A-Z]\n"
        ),
    );
    node.wait_pod("once", "running", |p| phase(p) == "Running");
    let mut session = Attached::start(&node, "once", "main");
    session.send("only once\n");
    // The end of the session is the end of the container's input: `tr` finishes, and its
    // output reaches kubectl before the stream closes.
    let (status, output, errors) = session.finish();
    assert!(status.success(), "{status}: {errors}");
    assert_eq!(output, "ONLY ONCE\n", "{errors}");
    let done = node.wait_pod("once", "succeeded", |p| phase(p) == "Succeeded");
    assert_eq!(
        container(&done, "containerStatuses", "main")["state"]["terminated"]["exitCode"],
        0,
        "{done}"
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
    let mut forward = kubectl_piped(
        &node,
        &[
            "port-forward",
            "-n",
            "default",
            "pod/web",
            &format!("{local}:8080"),
        ],
    );
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
