//! Node pressure, told and acted on: how long a node agent takes from an eviction threshold
//! crossed to the pressure condition on its Node in the API server and to the greedy pod's
//! eviction there, and from the pressure gone to the condition cleared — for sergeant and, in
//! the same run on the same control plane and containerd, the upstream kubelet of the pinned
//! release (`UPSTREAM_KUBELET`). And what the always-on sampling behind it costs an idle agent.
//! A benchmark: it prints numbers and writes `$SERGEANT_RESULTS_DIR/node_pressure.json`, it
//! asserts nothing.
//!
//! Each round runs two scenarios per agent, each on a fresh agent registered as a Node of its
//! own, in managed mode, with a quiet pod (it writes 1 MiB into an emptyDir and sleeps) and
//! then a greedy one:
//! - disk: the agent's root directory is an ext4 filesystem of [`DISK_MIB`] MiB on a loop
//!   device (a block-device filesystem like a real node's, which cAdvisor, where the upstream
//!   kubelet learns nodefs, lists as a partition), the `nodefs.available` threshold is
//!   [`FILL_MARGIN_MIB`] MiB below what the filesystem has available when it is made, and the
//!   filler writes [`FILL_MIB`] MiB into an emptyDir;
//! - memory: the `memory.available` threshold is [`MEMORY_MARGIN_MIB`] MiB below the machine's
//!   `memory.available` when the agent starts, and the hog holds [`HOG_GIB`] GiB of anonymous
//!   memory (`dd` buffers blocked on a pipe).
//!
//! The benchmark sees the threshold crossed itself: every [`POLL`] it reads the signal as the
//! kubelet defines it (statvfs of the root filesystem; `MemTotal` less the root memory
//! cgroup's working set) and notes the first reading below the threshold, and the first one
//! back above it afterwards (the pressure gone). Watches on the Node and on the pods give when
//! the condition turned True, when the greedy pod was `Failed`/`Evicted` (and whether the
//! quiet pod was evicted too), and when the condition turned False again. The two agents'
//! work is the same: the same KubeletConfiguration lines ([`COMMON_CONFIG`]: transition
//! period, node status frequencies, image GC that cannot interfere, and every upstream default
//! hard threshold set explicitly), the same 10 s housekeeping (sergeant's is fixed; the
//! upstream kubelet's cAdvisor is pinned to it with `--housekeeping-interval`), the same pods
//! (each with its service-account token mounted, as the API server gives every pod), the same
//! isolation (`common/isolation.rs`).
//!
//! In the disk scenario's quiet phase (Node Ready, the quiet pod running, [`SETTLE`] passed,
//! before the filler is created) the benchmark also measures, over [`QUIET_WINDOW`], the
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

#[path = "../tests/common/mod.rs"]
mod common;
/// The name `common/isolation.rs` reaches the test harness by, as in `benches/common`.
use common as harness;
#[allow(dead_code)] // shared with managed_startup, which also counts the pods' processes
#[path = "common/isolation.rs"]
mod isolation;
#[path = "common/managed_agent.rs"]
mod managed_agent;
#[path = "common/process.rs"]
mod process;
#[path = "common/rounds.rs"]
mod rounds;

use std::collections::BTreeSet;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant, SystemTime};

use common::cluster::Cluster;
use common::managed::cri_endpoint;
use common::node::SHELL;
use isolation::Isolation;
use managed_agent::{agent_kinds, forget_node, wait_ready, Agent, Setup};
use nix::mount::{mount, MsFlags};
use rounds::{results_dir, Rounds};
use serde_json::{json, Value};

const MI: u64 = 1024 * 1024;
/// The size of the disk scenario's root filesystem.
const DISK_MIB: u64 = 256;
/// The `nodefs.available` threshold lies this far below what the new filesystem has available.
const FILL_MARGIN_MIB: u64 = 128;
/// What the filler writes: past the threshold by [`FILL_MIB`] - [`FILL_MARGIN_MIB`] MiB.
const FILL_MIB: u64 = 160;
/// The `memory.available` threshold lies this far below the machine's when the agent starts:
/// room for the other work of a shared machine, whose working set moves by a GiB or so.
const MEMORY_MARGIN_MIB: u64 = 2048;
/// What the hog holds, in 1 GiB buffers: past the threshold by some 2 GiB.
const HOG_GIB: u64 = 4;
/// How long the pressure condition stays after the pressure was last seen.
const TRANSITION: Duration = Duration::from_secs(15);
/// cAdvisor's housekeeping interval in the upstream kubelet (its default), sergeant's fixed
/// sampling period.
const HOUSEKEEPING: &str = "10s";
/// What both agents run with besides their isolation, thresholds and transition period: node
/// status computed every 10 s and posted unchanged every 5 min (upstream's defaults), image GC
/// that never starts (a high threshold of 100 %), so that no image is removed under either.
const COMMON_CONFIG: &str = "nodeStatusUpdateFrequency: 10s\nnodeStatusReportFrequency: 5m\n\
    imageGCHighThresholdPercent: 100\nimageGCLowThresholdPercent: 99\n";
/// How often the benchmark reads the signal and the watches.
const POLL: Duration = Duration::from_millis(10);
/// After the quiet pod runs and before the quiet window: the agent's start-up work is done.
const SETTLE: Duration = Duration::from_secs(15);
/// The quiet window of the footprint.
const QUIET_WINDOW: Duration = Duration::from_secs(20);
/// How long an agent may take to get its Node Ready, or to run the quiet pod.
const READY_DEADLINE: Duration = Duration::from_secs(120);
/// How long a pressure episode may take, from the greedy pod's creation to the condition
/// cleared.
const EPISODE_DEADLINE: Duration = Duration::from_secs(300);
/// How long the pods may take to go at the end.
const DELETE_TIMEOUT: &str = "120s";

/// A resource the benchmark puts under pressure.
#[derive(Clone, Copy)]
enum Pressure {
    Disk,
    Memory,
}

impl Pressure {
    /// Both, in the order a round runs them.
    const ALL: [Pressure; 2] = [Pressure::Disk, Pressure::Memory];

    /// The scenario's name in node names, results and logs.
    fn name(self) -> &'static str {
        match self {
            Pressure::Disk => "disk",
            Pressure::Memory => "memory",
        }
    }

    /// The Node condition it sets.
    fn condition(self) -> &'static str {
        match self {
            Pressure::Disk => "DiskPressure",
            Pressure::Memory => "MemoryPressure",
        }
    }
}

/// `memory.available` as the kubelet computes it: `MemTotal` less the root memory cgroup's
/// working set (its usage less its inactive file cache; on cgroup v2, where the root has no
/// usage file, `MemTotal - MemFree` less `inactive_file`).
fn memory_available() -> u64 {
    let meminfo = fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let kib = |key: &str| {
        meminfo
            .lines()
            .find_map(|l| {
                l.strip_prefix(key)?
                    .trim()
                    .strip_suffix("kB")?
                    .trim()
                    .parse()
                    .ok()
            })
            .map_or(0, |k: u64| k * 1024)
    };
    let stat_value = |path: &str, key: &str| {
        fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
            .unwrap_or(0u64)
    };
    let total = kib("MemTotal:");
    let v1 = "/sys/fs/cgroup/memory";
    let (usage, inactive) = match fs::read_to_string(format!("{v1}/memory.usage_in_bytes")) {
        Ok(usage) => (
            usage.trim().parse().unwrap_or(0),
            stat_value(&format!("{v1}/memory.stat"), "total_inactive_file"),
        ),
        Err(_) => (
            total.saturating_sub(kib("MemFree:")),
            stat_value("/sys/fs/cgroup/memory.stat", "inactive_file"),
        ),
    };
    total.saturating_sub(usage.saturating_sub(inactive))
}

/// Bytes available to unprivileged users on the filesystem of `path` (statvfs), as the kubelet
/// counts `nodefs.available`.
fn fs_available(path: &Path) -> u64 {
    nix::sys::statvfs::statvfs(path).map_or(0, |s| s.blocks_available() * s.fragment_size())
}

/// An ext4 filesystem in an image file on a loop device, mounted on a directory of its own;
/// when dropped, unmounted with whatever an agent left mounted on it, detached and removed.
struct LoopFs {
    dir: tempfile::TempDir,
    device: String,
    _image: tempfile::TempDir,
}

/// Runs `program` with `args`; its standard output, or why it failed.
fn run(program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    } else {
        Err(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl LoopFs {
    /// Makes an ext4 of `mib` MiB (no blocks reserved for root) and mounts it.
    fn mount(mib: u64) -> Result<Self, String> {
        let image_dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let image = image_dir.path().join("nodefs.img");
        fs::File::create(&image)
            .and_then(|f| f.set_len(mib * MI))
            .map_err(|e| format!("{}: {e}", image.display()))?;
        let image = image.to_string_lossy().into_owned();
        run("mkfs.ext4", &["-q", "-F", "-m", "0", &image])?;
        let device = run("losetup", &["--find", "--show", &image])?;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let fs = Self {
            dir,
            device,
            _image: image_dir,
        };
        mount(
            Some(fs.device.as_str()),
            fs.path(),
            Some("ext4"),
            MsFlags::empty(),
            None::<&str>,
        )
        .map_err(|e| format!("mounting {} (needs root): {e}", fs.device))?;
        Ok(fs)
    }

    /// The mount point.
    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for LoopFs {
    /// Unmounts the filesystem with what an agent left mounted on it or below it, and detaches
    /// the loop device (once the filesystem is released, when a mount had to go lazily).
    fn drop(&mut self) {
        isolation::unmount_all(self.path());
        if let Err(e) = run("losetup", &["--detach", &self.device]) {
            println!("{e}");
        }
    }
}

/// What a scenario sets up before its agent starts: the threshold, the root filesystem, the
/// greedy pod.
struct Prepared {
    pressure: Pressure,
    /// The threshold in MiB: the signal is below it when fewer bytes are available.
    threshold_mib: u64,
    /// The disk scenario's root filesystem.
    fs: Option<LoopFs>,
}

impl Prepared {
    /// Makes the disk scenario's filesystem, and sets the threshold from what is available now.
    fn new(pressure: Pressure) -> Result<Self, String> {
        let (fs, margin) = match pressure {
            Pressure::Disk => (Some(LoopFs::mount(DISK_MIB)?), FILL_MARGIN_MIB),
            Pressure::Memory => (None, MEMORY_MARGIN_MIB),
        };
        let prepared = Self {
            pressure,
            threshold_mib: 0,
            fs,
        };
        let threshold_mib = (prepared.available() / MI).saturating_sub(margin);
        Ok(Self {
            threshold_mib,
            ..prepared
        })
    }

    /// The signal's available bytes now, as the benchmark reads them.
    fn available(&self) -> u64 {
        match &self.fs {
            Some(fs) => fs_available(fs.path()),
            None => memory_available(),
        }
    }

    /// Whether the signal is below the threshold now.
    fn below(&self) -> bool {
        self.available() < self.threshold_mib * MI
    }

    /// The hard thresholds: upstream's defaults' signals, each set explicitly (so neither
    /// agent fills in defaults of its own), this scenario's at its threshold and the others
    /// where the shared test machine meets none of them.
    fn eviction_hard(&self) -> String {
        let (memory, nodefs) = match self.pressure {
            Pressure::Disk => ("100Mi".to_owned(), format!("{}Mi", self.threshold_mib)),
            Pressure::Memory => (format!("{}Mi", self.threshold_mib), "512Mi".to_owned()),
        };
        format!(
            "evictionHard:\n  memory.available: {memory}\n  nodefs.available: {nodefs}\n  \
             nodefs.inodesFree: 5%\n  imagefs.available: 512Mi\n  imagefs.inodesFree: 5%\n"
        )
    }

    /// The agent's setup: `isolation`'s layout, the common lines, the thresholds, the root.
    fn setup(&self, isolation: &Isolation) -> Setup {
        Setup {
            kubelet: format!(
                "{}{COMMON_CONFIG}evictionPressureTransitionPeriod: {}s\n{}",
                isolation.layout_config(),
                TRANSITION.as_secs(),
                self.eviction_hard()
            ),
            root_dir: self.fs.as_ref().map(|fs| fs.path().to_owned()),
            upstream_flags: vec![format!("--housekeeping-interval={HOUSEKEEPING}")],
        }
    }

    /// The greedy pod's container: it writes past the threshold into its emptyDir, or holds
    /// memory past it, and sleeps.
    fn greedy_container(&self) -> String {
        match self.pressure {
            Pressure::Disk => writer(FILL_MIB * MI),
            Pressure::Memory => format!(
                "  containers:\n  - name: main\n    image: {SHELL}\n    command: [\"sh\", \"-c\", \
                 \"for i in $(seq {HOG_GIB}); do dd if=/dev/zero bs=1073741824 count=1 2>/dev/null \
                 | sleep 3600 & done; wait\"]\n"
            ),
        }
    }
}

/// A pod spec whose container writes `bytes` of zeros into its emptyDir and sleeps.
fn writer(bytes: u64) -> String {
    format!(
        "  containers:\n  - name: main\n    image: {SHELL}\n    command: [\"sh\", \"-c\", \
         \"head -c {bytes} /dev/zero > /data/fill; sleep 3600\"]\n    volumeMounts:\n    \
         - {{name: data, mountPath: /data}}\n  volumes:\n  - {{name: data, emptyDir: {{}}}}\n"
    )
}

/// Creates pod `name` on `node`, labelled `bench=<label>`, with the spec lines `spec`.
fn create_pod(cluster: &Cluster, node: &str, label: &str, name: &str, spec: &str) {
    cluster.apply(&format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: default\n  \
         labels: {{bench: {label}}}\nspec:\n  nodeName: {node}\n  terminationGracePeriodSeconds: 1\n{spec}"
    ));
}

/// A `kubectl get --watch` printing one line per event, each line with when it arrived;
/// stopped when dropped.
struct Watch {
    child: Child,
    lines: Receiver<(SystemTime, String)>,
}

impl Watch {
    /// Watches what `args` (after `get`) name, printing each event with the JSONPath `template`.
    fn start(cluster: &Cluster, args: &[&str], template: &str) -> Self {
        let output = format!("jsonpath={template}{{\"\\n\"}}");
        let mut child =
            cluster.kubectl_spawn(&[&["get"], args, &["--watch", "-o", &output]].concat());
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender
                    .send((SystemTime::now(), line.trim().to_owned()))
                    .is_err()
                {
                    break;
                }
            }
        });
        Self { child, lines }
    }

    /// The lines that arrived since the last call.
    fn arrived(&self) -> Vec<(SystemTime, String)> {
        self.lines.try_iter().collect()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The watches of one scenario: the Node's pressure condition, and the scenario's pods.
struct Watches {
    node: Watch,
    pods: Watch,
}

impl Watches {
    fn start(cluster: &Cluster, node: &str, label: &str, pressure: Pressure) -> Self {
        let condition = format!(
            "{{.status.conditions[?(@.type==\"{}\")].status}}",
            pressure.condition()
        );
        let selector = format!("bench={label}");
        Self {
            node: Watch::start(cluster, &["node", node], &condition),
            pods: Watch::start(
                cluster,
                &["pods", "-n", "default", "-l", &selector],
                "{.metadata.name} {.status.phase} {.status.reason}",
            ),
        }
    }
}

/// What the watches and the benchmark's readings showed of one scenario, and when.
struct Timeline {
    /// The greedy pod's name.
    greedy: String,
    /// When the greedy pod was created; the steps below count from then on.
    created: Option<SystemTime>,
    /// The Node condition's status as last printed.
    condition: String,
    /// The pods seen Running.
    running: BTreeSet<String>,
    /// The benchmark's first reading below the threshold.
    crossed: Option<SystemTime>,
    /// Its first reading back above it afterwards.
    recovered: Option<SystemTime>,
    /// The fewest bytes it read available.
    lowest: Option<u64>,
    /// The condition True on the Node, first seen.
    posted: Option<SystemTime>,
    /// The condition False again after that.
    cleared: Option<SystemTime>,
    /// The greedy pod `Failed`/`Evicted`.
    evicted: Option<SystemTime>,
    /// The first pod `Failed`: when, its name and reason.
    first_failed: Option<(SystemTime, String, String)>,
    /// Whether another pod than the greedy one failed.
    quiet_failed: bool,
}

impl Timeline {
    /// A timeline of the scenario whose greedy pod is `greedy`.
    fn new(greedy: &str) -> Self {
        Self {
            greedy: greedy.to_owned(),
            created: None,
            condition: String::new(),
            running: BTreeSet::new(),
            crossed: None,
            recovered: None,
            lowest: None,
            posted: None,
            cleared: None,
            evicted: None,
            first_failed: None,
            quiet_failed: false,
        }
    }

    /// Notes a reading of the signal.
    fn read(&mut self, prepared: &Prepared) {
        let available = prepared.available();
        let below = available < prepared.threshold_mib * MI;
        self.lowest = Some(self.lowest.map_or(available, |l| l.min(available)));
        match (self.crossed, self.recovered) {
            (None, _) if below => self.crossed = Some(SystemTime::now()),
            (Some(_), None) if !below => self.recovered = Some(SystemTime::now()),
            _ => {}
        }
    }

    /// Notes what the watches printed since the last call.
    fn watch(&mut self, watches: &Watches) {
        for (at, status) in watches.node.arrived() {
            if self.created.is_some() {
                match status.as_str() {
                    "True" if self.posted.is_none() => self.posted = Some(at),
                    "False" if self.posted.is_some() && self.cleared.is_none() => {
                        self.cleared = Some(at);
                    }
                    _ => {}
                }
            }
            self.condition = status;
        }
        for (at, line) in watches.pods.arrived() {
            let mut fields = line.split(' ');
            let (name, phase, reason) = (
                fields.next().unwrap_or(""),
                fields.next().unwrap_or(""),
                fields.next().unwrap_or(""),
            );
            match phase {
                "Running" => {
                    self.running.insert(name.to_owned());
                }
                "Failed" => self.failed(at, name, reason),
                _ => {}
            }
        }
    }

    /// Notes pod `name` seen `Failed` for `reason` at `at`.
    fn failed(&mut self, at: SystemTime, name: &str, reason: &str) {
        if self.first_failed.is_none() {
            self.first_failed = Some((at, name.to_owned(), reason.to_owned()));
        }
        if name == self.greedy {
            if reason == "Evicted" && self.evicted.is_none() {
                self.evicted = Some(at);
            }
        } else {
            self.quiet_failed = true;
        }
    }

    /// Whether every step of the episode was seen.
    fn complete(&self) -> bool {
        self.crossed.is_some()
            && self.recovered.is_some()
            && self.posted.is_some()
            && self.evicted.is_some()
            && self.cleared.is_some()
    }
}

/// Milliseconds from `from` to `to` (negative when `to` came first); `None` when either is
/// missing.
fn millis(from: Option<SystemTime>, to: Option<SystemTime>) -> Option<f64> {
    let (from, to) = (from?, to?);
    Some(match to.duration_since(from) {
        Ok(d) => d.as_secs_f64() * 1e3,
        Err(e) => -e.duration().as_secs_f64() * 1e3,
    })
}

/// The processes of the benchmark's containerd instance: its containerd and shims, which
/// name the instance's directory (the endpoint's) on their command lines.
fn runtime_pids() -> Vec<u32> {
    let endpoint = cri_endpoint();
    let socket = Path::new(endpoint.trim_start_matches("unix://"));
    let Some(dir) = socket.parent().map(|d| format!("{}/", d.display())) else {
        return Vec::new();
    };
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(&dir))
        })
        .collect()
}

/// The agent's footprint over the quiet window: its RSS at the end and its CPU, and the CPU of
/// the containerd instance, measured alongside.
fn quiet_footprint(agent_pid: u32) -> Value {
    let runtime = runtime_pids();
    let runtime_thread = std::thread::spawn(move || process::cpu_percent(&runtime, QUIET_WINDOW));
    let agent_cpu = process::cpu_percent(&[agent_pid], QUIET_WINDOW);
    let runtime_cpu = runtime_thread.join().unwrap_or(f64::NAN);
    #[allow(clippy::cast_precision_loss)]
    let rss_mib = process::rss_kib(agent_pid) as f64 / 1024.0;
    json!({
        "agent_rss_mib": rss_mib,
        "agent_cpu_percent": agent_cpu,
        "runtime_cpu_percent": runtime_cpu,
    })
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

/// The steps of the episode in `timeline` that were not seen.
fn missing(timeline: &Timeline, condition: &str) -> Vec<String> {
    [
        (
            timeline.crossed.is_none(),
            "the threshold crossed".to_owned(),
        ),
        (timeline.posted.is_none(), format!("{condition}=True")),
        (
            timeline.evicted.is_none(),
            "the greedy pod Failed/Evicted".to_owned(),
        ),
        (
            timeline.recovered.is_none(),
            "the signal back above the threshold".to_owned(),
        ),
        (
            timeline.cleared.is_none(),
            format!("{condition}=False again"),
        ),
    ]
    .into_iter()
    .filter_map(|(missed, step)| missed.then_some(step))
    .collect()
}

/// The numbers of the episode in `timeline`.
fn episode(timeline: &Timeline) -> Value {
    #[allow(clippy::cast_precision_loss)]
    let lowest = timeline.lowest.map(|l| l as f64 / MI as f64);
    let first_failed = timeline
        .first_failed
        .as_ref()
        .map(|(_, name, reason)| format!("{name} ({reason})"));
    json!({
        "created_to_crossed_ms": millis(timeline.created, timeline.crossed),
        "crossed_to_condition_ms": millis(timeline.crossed, timeline.posted),
        "crossed_to_evicted_ms": millis(timeline.crossed, timeline.evicted),
        "crossed_to_first_failed_ms": millis(timeline.crossed, timeline.first_failed.as_ref().map(|f| f.0)),
        "recovered_to_cleared_ms": millis(timeline.recovered, timeline.cleared),
        "lowest_available_mib": lowest,
        "quiet_pod_failed": u8::from(timeline.quiet_failed),
        "first_failed": first_failed,
    })
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
    create_pod(
        cluster,
        &names.node,
        &names.label,
        &names.greedy,
        &prepared.greedy_container(),
    );
    timeline.created = Some(SystemTime::now());
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
            "{:>18}quiet, one pod: agent RSS {:.1} MiB, agent CPU {:.2} %, containerd and shims CPU {:.2} %",
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
