//! A pod's life when it is cut short, on the real containerd: a removal interrupts a start in
//! progress and the termination of a big pod is bounded by its grace period; `/pods` never
//! reports a container running that the runtime does not run, whether the pod was displaced
//! by a duplicate manifest or its container was stopped from outside.
//!
//! Needs the private containerd `tests/run.sh` starts (SERGEANT_CRI_ENDPOINT) and its local
//! registry with the test images.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use common::node::{container, manifest, phase, Node, POD_DEADLINE, SHELL};
use common::runtime::Runtime;
use common::wait_for;
use serde_json::Value;

/// How far `/pods` may lag the runtime: a PLEG relist (1 s on containerd 1.6), the pod's sync
/// and the poll, with the slack of a loaded test run (as the PLEG test allows).
const STATUS_LAG: Duration = Duration::from_millis(3500);
/// CRI's value of a running container.
const CONTAINER_RUNNING: i32 = 1;

/// The labels of everything the runtime holds for pod `name` of node `node-<tag>`.
fn pod_labels<'a>(node: &'a str, pod: &'a str) -> [(&'static str, &'a str); 2] {
    [("sergeant.dev/node", node), ("io.kubernetes.pod.name", pod)]
}

/// What the runtime ran, seen by polling: when each container was last seen running.
#[derive(Default)]
struct Seen {
    running: BTreeMap<String, Instant>,
}

impl Seen {
    /// Lists the node's containers and notes the running ones.
    fn look(&mut self, runtime: &Runtime, node: &str) {
        let now = Instant::now();
        for c in runtime.containers(&[("sergeant.dev/node", node)]) {
            if c.state == CONTAINER_RUNNING {
                self.running.insert(c.id, now);
            }
        }
    }

    /// Fails when `pods` (read at `read_at`, before the last [`Seen::look`]) reports a
    /// container running that the runtime did not run within [`STATUS_LAG`] of that read.
    fn check(&self, pods: &Value, read_at: Instant) {
        for pod in pods["items"].as_array().into_iter().flatten() {
            let statuses = ["initContainerStatuses", "containerStatuses"]
                .into_iter()
                .flat_map(|field| pod["status"][field].as_array().into_iter().flatten());
            for status in statuses {
                let shown_running = status["state"]["running"].is_object();
                if !shown_running && status["ready"] != true {
                    continue;
                }
                let id = status["containerID"]
                    .as_str()
                    .and_then(|id| id.strip_prefix("containerd://"))
                    .unwrap_or_default();
                let last_run = self.running.get(id);
                assert!(
                    last_run.is_some_and(|at| *at + STATUS_LAG >= read_at),
                    "/pods shows container {} of {} running or ready, which the runtime last ran {:?} before: {pod}",
                    status["name"],
                    pod["metadata"]["name"],
                    last_run.map(|at| read_at.saturating_duration_since(*at)),
                );
            }
        }
    }
}

#[test]
fn removing_a_starting_pod_stops_its_start_and_terminates_it_within_its_grace_period() {
    const CONTAINERS: usize = 200;
    const GRACE: Duration = Duration::from_secs(2);
    let node = Node::start("big-stop");
    let runtime = Runtime::connect();
    let labels = pod_labels("node-big-stop", "big-node-big-stop");
    // What an earlier run left behind is an orphan the agent removes first.
    wait_for("no pod of an earlier run left", POD_DEADLINE * 3, || {
        runtime.sandboxes(&labels).is_empty().then_some(())
    });
    let containers: String = (0..CONTAINERS)
        .map(|i| format!("  - name: c{i}\n    image: {SHELL}\n    command: [sleep, '3600']\n"))
        .collect();
    node.write(
        "big.yaml",
        &manifest(
            "big",
            &format!(
                "  terminationGracePeriodSeconds: {}\n  containers:\n{containers}",
                GRACE.as_secs()
            ),
        ),
    );
    wait_for("the first containers created", POD_DEADLINE, || {
        (runtime.containers(&labels).len() >= 20).then_some(())
    });
    node.remove("big.yaml");
    wait_for("the agent deciding to terminate", POD_DEADLINE, || {
        node.agent
            .log()
            .lines()
            .any(|line| line.contains("big-node-big-stop") && line.contains(": terminating"))
            .then_some(())
    });
    let decided = Instant::now();
    let at_decision: BTreeSet<String> = runtime
        .containers(&labels)
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert!(
        at_decision.len() < CONTAINERS,
        "the whole pod was created before its removal was seen: the test needs more containers"
    );
    // Every container seen that was not there at the decision; polled until the pod is gone
    // (or well past the bound below, to tell how long it took).
    let mut later = BTreeSet::new();
    let gone_after = loop {
        let now = runtime.containers(&labels);
        later.extend(
            now.iter()
                .map(|c| c.id.clone())
                .filter(|id| !at_decision.contains(id)),
        );
        if now.is_empty() && runtime.sandboxes(&labels).is_empty() {
            break Some(decided.elapsed());
        }
        if decided.elapsed() > POD_DEADLINE * 2 {
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    eprintln!(
        "{} containers at the decision, {} created after it; all gone {gone_after:?} after it",
        at_decision.len(),
        later.len()
    );
    // One create may have been in flight when termination was decided.
    assert!(
        later.len() <= 1,
        "{} containers were created after the pod's termination was decided",
        later.len()
    );
    let took = gone_after.unwrap_or_else(|| {
        panic!(
            "the pod was not gone {:?} after its termination was decided",
            POD_DEADLINE * 2
        )
    });
    // The grace period, then stopping the sandbox and removing it with its containers: the
    // removal of a few hundred containers takes seconds on a loaded machine.
    let bound = GRACE + Duration::from_secs(20);
    assert!(
        took < bound,
        "the pod took {took:?} to go after its termination was decided, over {bound:?}"
    );
    let (_, metrics) = node.agent.get("/metrics");
    let interrupted = metrics
        .lines()
        .find_map(|line| line.strip_prefix("sergeant_pod_syncs_interrupted_total "))
        .and_then(|value| value.trim().parse::<f64>().ok());
    assert_eq!(interrupted, Some(1.0), "the start was interrupted once");
}

#[test]
fn a_displaced_pod_is_never_reported_running_once_the_runtime_stopped_it() {
    let node = Node::start("displaced");
    let runtime = Runtime::connect();
    let mut seen = Seen::default();
    // Two containers: `quick` exits on SIGTERM, `slow` ignores it (a shell's `sleep` as PID 1)
    // and holds the termination for its grace period, as a slow application would.
    let pod = |version: &str| {
        manifest(
            "dup",
            &format!(
                "  terminationGracePeriodSeconds: 15\n  containers:\n\
                 \x20 - name: quick\n    image: {SHELL}\n    command: [sh, -c, 'trap \"exit 0\" TERM; while true; do sleep 1; done']\n    env: [{{name: VERSION, value: {version}}}]\n    readinessProbe:\n      exec: {{command: ['true']}}\n      periodSeconds: 1\n\
                 \x20 - name: slow\n    image: {SHELL}\n    command: [sleep, '3600']\n"
            ),
        )
    };
    node.write("b.yaml", &pod("old"));
    let first = node.wait_pod("dup", "the first pod Ready", |p| {
        container(p, "containerStatuses", "quick")["ready"] == true
    });
    let displaced_uid = first["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    seen.look(&runtime, "node-displaced");

    // `a.yaml` sorts first: its pod wins the name, the running one is displaced.
    node.write("a.yaml", &pod("new"));
    let displaced = [("io.kubernetes.pod.uid", displaced_uid.as_str())];
    let started = Instant::now();
    let mut winner_running = false;
    let mut displaced_gone = false;
    while !(winner_running && displaced_gone) {
        assert!(
            started.elapsed() < POD_DEADLINE,
            "within {POD_DEADLINE:?}: the winner running {winner_running}, the displaced pod gone {displaced_gone}"
        );
        let read_at = Instant::now();
        let pods = node.agent.get_json("/pods");
        seen.look(&runtime, "node-displaced");
        seen.check(&pods, read_at);
        let named: Vec<&Value> = pods["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["metadata"]["name"] == "dup-node-displaced")
            .collect();
        winner_running = named.iter().any(|p| {
            p["metadata"]["uid"] != displaced_uid.as_str()
                && phase(p) == "Running"
                && container(p, "containerStatuses", "quick")["state"]["running"].is_object()
        });
        displaced_gone =
            runtime.containers(&displaced).is_empty() && runtime.sandboxes(&displaced).is_empty();
        std::thread::sleep(Duration::from_millis(100));
    }
    // Once its containers are gone, the displaced pod is not listed any more.
    wait_for(
        "the displaced pod unlisted",
        Duration::from_secs(10),
        || {
            let pods = node.agent.get_json("/pods");
            let listed = pods["items"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|p| p["metadata"]["uid"] == displaced_uid.as_str());
            (!listed).then_some(())
        },
    );
}

#[test]
fn a_container_stopped_from_outside_while_its_pod_syncs_is_not_reported_running() {
    const HOOK: Duration = Duration::from_secs(15);
    let node = Node::start("stopped-outside");
    let runtime = Runtime::connect();
    let mut seen = Seen::default();
    // `flaky` exits after a while and is restarted; its postStart hook holds the pod's sync
    // for HOOK each time, as a slow pull or a big pod's start would.
    node.write(
        "victim.yaml",
        &manifest(
            "victim",
            &format!(
                "  containers:\n\
                 \x20 - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n    readinessProbe:\n      exec: {{command: ['true']}}\n      periodSeconds: 1\n\
                 \x20 - name: flaky\n    image: {SHELL}\n    command: [sh, -c, 'sleep 20; exit 1']\n    lifecycle:\n      postStart:\n        exec: {{command: [sleep, '{}']}}\n",
                HOOK.as_secs()
            ),
        ),
    );
    let flaky = [
        ("io.kubernetes.pod.name", "victim-node-stopped-outside"),
        ("io.kubernetes.container.name", "flaky"),
    ];
    // Checked from the start: never a container reported running that the runtime stopped
    // more than a relist and a sync before.
    let started = Instant::now();
    let mut stopped: Option<Instant> = None;
    while stopped.is_none_or(|at| at.elapsed() < HOOK + Duration::from_secs(5)) {
        assert!(
            started.elapsed() < POD_DEADLINE * 2,
            "main not Ready with flaky restarted within {:?}",
            POD_DEADLINE * 2
        );
        let read_at = Instant::now();
        let pods = node.agent.get_json("/pods");
        seen.look(&runtime, "node-stopped-outside");
        seen.check(&pods, read_at);
        if stopped.is_some() {
            std::thread::sleep(Duration::from_millis(100));
            continue;
        }
        // Once main is Ready and flaky's restart holds the sync in its hook, main is stopped
        // from outside.
        let main = pods["items"]
            .as_array()
            .and_then(|all| all.first())
            .map(|pod| container(pod, "containerStatuses", "main").clone())
            .unwrap_or_default();
        let instances = runtime.containers(&flaky);
        let hook_running = instances.len() >= 2 && instances[0].state == CONTAINER_RUNNING;
        if main["ready"] == true && hook_running {
            let id = main["containerID"]
                .as_str()
                .and_then(|id| id.strip_prefix("containerd://"))
                .expect("a containerd container ID");
            runtime.stop_container(id);
            stopped = Some(Instant::now());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
