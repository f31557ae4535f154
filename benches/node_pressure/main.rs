//! Node pressure, told and acted on: how long a node agent takes from an eviction threshold
//! crossed to the pressure condition on its Node in the API server and to the greedy pod's
//! eviction there, and from the pressure gone to the condition cleared — for sergeant and, in
//! the same run on the same control plane and containerd, the upstream kubelet of the pinned
//! release (`UPSTREAM_KUBELET`). And the agent's footprint with one quiet pod while it
//! samples (always on in both agents); the footprint with 110 idle pods that issue 17 asks
//! for is `benches/pod_startup.rs`'s.
//! A benchmark: it prints numbers and writes `$SERGEANT_RESULTS_DIR/node_pressure.json`, it
//! asserts nothing.
//!
//! Each round runs two scenarios per agent, each on a fresh agent registered as a Node of its
//! own, in managed mode, with a quiet pod (it writes 1 MiB into an emptyDir and sleeps) and
//! then a greedy one:
//! - disk: the agent's root directory is an ext4 filesystem of [`pressure::DISK_MIB`] MiB on a loop
//!   device (a block-device filesystem like a real node's, which cAdvisor, where the upstream
//!   kubelet learns nodefs, lists as a partition), the `nodefs.available` threshold is
//!   [`pressure::FILL_MARGIN_MIB`] MiB below what the filesystem has available when it is made, and the
//!   filler writes [`pressure::FILL_MIB`] MiB into an emptyDir;
//! - memory: the `memory.available` threshold is [`pressure::MEMORY_MARGIN_MIB`] MiB below the machine's
//!   `memory.available` when the agent starts, and the hog holds [`pressure::HOG_GIB`] GiB of anonymous
//!   memory (`dd` buffers blocked on a pipe).
//!
//! The benchmark sees the threshold crossed itself: every [`POLL`] it reads the signal as the
//! kubelet defines it (statvfs of the root filesystem; `MemTotal` less the root memory
//! cgroup's working set) and notes the first reading below the threshold, and the first one
//! back above it afterwards (the pressure gone). Watches on the Node and on the pods give when
//! the condition turned True, when the greedy pod was `Failed`/`Evicted` (and whether the
//! quiet pod was evicted too), and when the condition turned False again. The two agents'
//! work is the same: the same KubeletConfiguration lines ([`pressure::COMMON_CONFIG`]: transition
//! period, node status frequencies, image GC that cannot interfere, and every upstream default
//! hard threshold set explicitly), the same 10 s housekeeping (sergeant's is fixed; the
//! upstream kubelet's cAdvisor is pinned to it with `--housekeeping-interval`), the same pods
//! (each with its service-account token mounted, as the API server gives every pod), the same
//! isolation (`common/isolation.rs`). One setting differs, each agent's own:
//! `localStorageCapacityIsolation` (see [`pressure::COMMON_CONFIG`]).
//!
//! In the disk scenario's quiet phase (Node Ready, the quiet pod running, [`SETTLE`] passed,
//! before the filler is created) the benchmark also measures, over [`footprint::QUIET_WINDOW`], the
//! agent's process alone (its RSS at the end, its CPU time over the window) and the
//! benchmark's containerd instance (containerd and its shims, CPU time): the cost of sampling
//! with one pod. `benches/pod_startup.rs` measures the agents idle with 110 pods.
//!
//! `SERGEANT_BENCH_ROUNDS` rounds per agent, interleaved (see `common/rounds.rs`), each
//! printed as it comes and their median, min and max per agent at the end. Pods, Nodes, the
//! mount and the loop device go when a scenario ends, failed or not. Agent logs:
//! `$SERGEANT_RESULTS_DIR/node_pressure-<agent>-<scenario>-<round>.log`.
//!
//! Needs root (the mount), SERGEANT_CRI_ENDPOINT and SERGEANT_CONTROL_PLANE_DIR (see
//! tests/bench.sh), on a containerd instance of its own: the upstream kubelet removes every
//! container on it that it does not know.

#[path = "../../tests/common/mod.rs"]
mod common;
/// The name `common/isolation.rs` reaches the test harness by, as in `benches/common`.
use common as harness;
#[allow(dead_code)] // shared with managed_startup, which also counts the pods' processes
#[path = "../common/isolation.rs"]
mod isolation;
#[path = "../common/managed_agent.rs"]
mod managed_agent;
#[path = "../common/process.rs"]
mod process;
#[path = "../common/rounds.rs"]
mod rounds;

mod footprint;
mod loop_fs;
mod pressure;
mod timeline;
mod watch;

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use common::cluster::Cluster;
use common::managed::cri_endpoint;
use footprint::{quiet_footprint, QUIET_WINDOW};
use isolation::Isolation;
use managed_agent::{agent_kinds, forget_node, wait_ready, Agent};
use pressure::{
    writer, Prepared, Pressure, COMMON_CONFIG, DISK_MIB, FILL_MARGIN_MIB, FILL_MIB, HOG_GIB,
    HOUSEKEEPING, MEMORY_MARGIN_MIB, MI, TRANSITION,
};
use rounds::{results_dir, Rounds};
use serde_json::{json, Value};
use timeline::{episode, missing, Timeline};
use watch::Watches;

/// How often the benchmark reads the signal and the watches.
const POLL: Duration = Duration::from_millis(10);
/// After the quiet pod runs and before the quiet window: the agent's start-up work is done.
const SETTLE: Duration = Duration::from_secs(15);
/// How long an agent may take to get its Node Ready, or to run the quiet pod.
const READY_DEADLINE: Duration = Duration::from_secs(120);
/// How long a pressure episode may take, from the greedy pod's creation to the condition
/// cleared.
const EPISODE_DEADLINE: Duration = Duration::from_secs(300);
/// How long the pods may take to go at the end.
const DELETE_TIMEOUT: &str = "120s";

/// Creates pod `name` on `node`, labelled `bench=<label>`, with the spec lines `spec`.
fn create_pod(cluster: &Cluster, node: &str, label: &str, name: &str, spec: &str) {
    cluster.apply(&format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: default\n  \
         labels: {{bench: {label}}}\nspec:\n  nodeName: {node}\n  terminationGracePeriodSeconds: 1\n{spec}"
    ));
}

/// Waits until `done` holds for `timeline`, kept from the watches and, given `prepared`, from
/// the benchmark's readings of the signal, every [`POLL`], up to `deadline`; whether it held.
/// `Err` when the agent exits meanwhile.
fn wait_watching(
    timeline: &mut Timeline,
    watches: &Watches,
    prepared: Option<&Prepared>,
    agent: &mut Agent,
    deadline: Duration,
    done: impl Fn(&Timeline) -> bool,
) -> Result<bool, String> {
    let start = Instant::now();
    loop {
        if let Some(prepared) = prepared {
            timeline.read(prepared);
        }
        timeline.watch(watches);
        if done(timeline) {
            return Ok(true);
        }
        if let Some(status) = agent.exited() {
            return Err(format!("the agent exited ({status})"));
        }
        if start.elapsed() > deadline {
            return Ok(false);
        }
        std::thread::sleep(POLL);
    }
}

/// The names of one scenario's Node and pods.
struct Names {
    node: String,
    /// The pods' `bench` label.
    label: String,
    quiet: String,
    greedy: String,
}

impl Names {
    /// The names of agent `agent`'s scenario `pressure` in round `index`.
    fn of(agent: &str, pressure: Pressure, index: usize) -> Self {
        let node = format!("bench-pressure-{agent}-{}", pressure.name()).replace('_', "-");
        let label = format!("{node}-{index}");
        Self {
            quiet: format!("{label}-quiet"),
            greedy: format!("{label}-greedy"),
            node,
            label,
        }
    }
}

/// Deletes a scenario's pods (through its agent, which tears their volumes down) and its Node
/// when dropped, after a failed step too; declared after the agent, so dropped before it.
struct Leftovers<'a> {
    cluster: &'a Cluster,
    node: String,
    label: String,
}

impl Drop for Leftovers<'_> {
    fn drop(&mut self) {
        let selector = format!("bench={}", self.label);
        let timeout = format!("--timeout={DELETE_TIMEOUT}");
        let base = ["delete", "pods", "-n", "default", "-l", selector.as_str()];
        let (deleted, out) = self
            .cluster
            .kubectl(&[&base[..], &["--wait=true", &timeout]].concat());
        if !deleted {
            println!(
                "the agent did not delete the pods within {DELETE_TIMEOUT} ({}): force-deleted them",
                out.trim()
            );
            self.cluster
                .kubectl(&[&base[..], &["--grace-period=0", "--force"]].concat());
        }
        self.cluster
            .kubectl(&["delete", "node", &self.node, "--ignore-not-found"]);
    }
}

/// Runs scenario `prepared` on `agent`, Node and pods `names`: its numbers, or why not.
fn measure(
    cluster: &Cluster,
    names: &Names,
    prepared: &Prepared,
    agent: &mut Agent,
) -> Result<Value, String> {
    wait_ready(cluster, &names.node, agent, READY_DEADLINE)?;
    let condition = prepared.pressure.condition();
    let watches = Watches::start(cluster, &names.node, &names.label, prepared.pressure);
    let mut timeline = Timeline::new(&names.greedy);
    create_pod(
        cluster,
        &names.node,
        &names.label,
        &names.quiet,
        &writer(MI),
    );
    let quiet_running = wait_watching(&mut timeline, &watches, None, agent, READY_DEADLINE, |t| {
        t.running.contains(&names.quiet) && t.condition == "False"
    })?;
    if !quiet_running {
        return Err(format!(
            "within {READY_DEADLINE:?}: quiet pod Running {}, {condition}={:?}",
            timeline.running.contains(&names.quiet),
            timeline.condition
        ));
    }
    let mut numbers = json!({ "threshold_mib": prepared.threshold_mib });
    if let Pressure::Disk = prepared.pressure {
        std::thread::sleep(SETTLE);
        numbers["quiet"] = quiet_footprint(agent.pid());
    }
    timeline.watch(&watches);
    let available = prepared.available() / MI;
    if prepared.below() || timeline.condition != "False" {
        return Err(format!(
            "under pressure before the greedy pod: {available} MiB available, threshold {} MiB, \
             {condition}={:?}",
            prepared.threshold_mib, timeline.condition
        ));
    }
    timeline.created = Some(SystemTime::now());
    create_pod(
        cluster,
        &names.node,
        &names.label,
        &names.greedy,
        &prepared.greedy_container(),
    );
    let complete = wait_watching(
        &mut timeline,
        &watches,
        Some(prepared),
        agent,
        EPISODE_DEADLINE + TRANSITION,
        Timeline::complete,
    )?;
    let mut numbers_episode = episode(&timeline);
    if !complete {
        numbers_episode["missing"] = json!(missing(&timeline, condition));
    }
    for (key, value) in numbers_episode.as_object().into_iter().flatten() {
        numbers[key] = value.clone();
    }
    Ok(numbers)
}

/// A duration in ms for a printed line, `—` when it is missing.
fn shown(ms: &Value) -> String {
    ms.as_f64()
        .map_or_else(|| "—".to_owned(), |ms| format!("{:.1} s", ms / 1e3))
}

/// Prints scenario `pressure`'s numbers of agent `name`.
fn print_scenario(name: &str, pressure: Pressure, numbers: &Value) {
    let condition = pressure.condition();
    if let Some(error) = numbers.get("error") {
        println!("{name:>16} {}: not measured: {error}", pressure.name());
        return;
    }
    println!(
        "{name:>16} {}: threshold {} MiB, crossed {} after the greedy pod's creation; from then \
         {condition}=True {}, greedy pod Evicted {}; {condition}=False {} after the pressure \
         went (transition {} s); first pod failed: {}",
        pressure.name(),
        numbers["threshold_mib"],
        shown(&numbers["created_to_crossed_ms"]),
        shown(&numbers["crossed_to_condition_ms"]),
        shown(&numbers["crossed_to_evicted_ms"]),
        shown(&numbers["recovered_to_cleared_ms"]),
        TRANSITION.as_secs(),
        numbers["first_failed"].as_str().unwrap_or("none"),
    );
    if let Some(missing) = numbers.get("missing") {
        println!("{:>18}not seen within {EPISODE_DEADLINE:?}: {missing}", "");
    }
    let quiet = &numbers["quiet"];
    if quiet.is_object() {
        println!(
            "{:>18}quiet with one pod, sampling on: agent RSS {:.1} MiB, agent CPU {:.2} %, \
             containerd and shims CPU {:.2} % (with 110 idle pods: pod_startup)",
            "",
            quiet["agent_rss_mib"].as_f64().unwrap_or(f64::NAN),
            quiet["agent_cpu_percent"].as_f64().unwrap_or(f64::NAN),
            quiet["runtime_cpu_percent"].as_f64().unwrap_or(f64::NAN),
        );
    }
}

/// Scenario `pressure` of agent `name` (`binary` for the upstream kubelet) in round `index`: a
/// fresh agent on a fresh Node, measured, and everything it left removed.
fn scenario(
    cluster: &Cluster,
    name: &str,
    binary: Option<&Path>,
    index: usize,
    pressure: Pressure,
) -> Value {
    let names = Names::of(name, pressure, index);
    forget_node(cluster, &names.node);
    let log = results_dir().join(format!(
        "node_pressure-{name}-{}-{index}.log",
        pressure.name()
    ));
    let prepared = match Prepared::new(pressure) {
        Ok(prepared) => prepared,
        Err(why) => return json!({ "error": why }),
    };
    let scratch = tempfile::tempdir().expect("a temporary directory");
    let isolation = Isolation::new(&format!("pressure-{name}"), scratch.path());
    let setup = prepared.setup(&isolation);
    let mut agent = Agent::start_with(cluster, binary, &names.node, None, &setup, &log);
    let leftovers = Leftovers {
        cluster,
        node: names.node.clone(),
        label: names.label.clone(),
    };
    let measured = measure(cluster, &names, &prepared, &mut agent);
    if let Agent::Sergeant(_) = agent {
        let _ = fs::write(&log, agent.log());
    }
    // The pods go through the agent, the agent before its cgroups, all before the mount.
    drop(leftovers);
    drop(agent);
    drop(isolation);
    drop(prepared);
    let mut numbers = measured.unwrap_or_else(|why| json!({ "error": why }));
    numbers["log"] = json!(log.display().to_string());
    numbers
}

/// One round of agent `name`: every scenario in turn.
fn round(cluster: &Cluster, name: &str, binary: Option<&Path>, index: usize) -> Value {
    let mut numbers = json!({});
    for pressure in Pressure::ALL {
        let measured = scenario(cluster, name, binary, index, pressure);
        print_scenario(name, pressure, &measured);
        numbers[pressure.name()] = measured;
    }
    numbers
}

fn main() {
    let cluster = Cluster::from_env();
    let report = json!({
        "benchmark": "node_pressure",
        "runtime": cri_endpoint(),
        "common_config": format!("{COMMON_CONFIG}evictionPressureTransitionPeriod: {}s\n", TRANSITION.as_secs()),
        "housekeeping_interval": HOUSEKEEPING,
        "differs": "localStorageCapacityIsolation, each agent's own: sergeant has none (false); \
             the upstream kubelet its default (true), without which its cAdvisor collects no \
             filesystem stats and its eviction manager fails (no pod here sets an \
             ephemeral-storage limit)",
        "disk": format!(
            "root directory on an ext4 of {DISK_MIB} MiB on a loop device; nodefs.available \
             threshold {FILL_MARGIN_MIB} MiB below its available bytes when made; the greedy pod \
             writes {FILL_MIB} MiB into an emptyDir"
        ),
        "memory": format!(
            "memory.available threshold {MEMORY_MARGIN_MIB} MiB below the machine's when the \
             agent starts; the greedy pod holds {HOG_GIB} GiB of anonymous memory"
        ),
        "times": "crossed: the benchmark's first reading below the threshold (statvfs of the \
             root filesystem, or MemTotal less the root memory cgroup's working set, every 10 \
             ms); recovered: its first reading back above it; the condition and the pods' \
             phases as kubectl watches saw them in the API server",
        "quiet": format!(
            "disk scenario, the quiet pod running, {} s after it ran and before the greedy pod: \
             agent_rss_mib is the agent process's VmRSS at the end of a {} s window, \
             agent_cpu_percent its user+system CPU time over the window (percent of one core), \
             runtime_cpu_percent that of the benchmark's containerd and its shims; the agents \
             idle with 110 pods: pod_startup.json",
            SETTLE.as_secs(),
            QUIET_WINDOW.as_secs()
        ),
    });
    let mut rounds = Rounds::new("node_pressure.json", report);
    rounds.run(
        &agent_kinds(),
        |(name, _)| (*name).to_owned(),
        |(name, binary), index| round(&cluster, name, binary.as_deref(), index),
    );
    rounds.finish();
}
