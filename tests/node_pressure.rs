//! Node pressure on real containerd and the real control plane, made by real pods: a pod that
//! forks past a `pid.available` threshold, a pod that allocates past a `memory.available`
//! threshold set relative to the machine's memory at test start (and an
//! `allocatableMemory.available` threshold met by the pods' cgroup), and a pod that fills an
//! emptyDir past a `nodefs.available` threshold set relative to the size of a small tmpfs the
//! test mounts as the agent's root directory. The node's pressure conditions flip in the API
//! server with their upstream reasons and clear after the transition period; the greedy pod is
//! evicted (Failed, `Evicted`, upstream's message, an Event, `kubelet_evictions`), the evicted
//! pod's emptyDir is removed and its space given back (statvfs before and after), the pods that
//! did nothing wrong keep running, and new pods are refused while the pressure lasts.
//!
//! Needs root (the tmpfs mount) and the control plane and containerd `tests/run.sh` starts
//! (SERGEANT_CONTROL_PLANE_DIR, SERGEANT_CRI_ENDPOINT).

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::managed::{sleeper, Managed};
use common::node::SHELL;
use common::{wait_for, TestConfig};
use nix::mount::{mount, umount2, MntFlags, MsFlags};
use serde_json::Value;

/// How long a pressure may take to be seen, acted on and reported: one stats period (10 s),
/// one status round, and the API server's round trips, with room for a loaded machine.
const PRESSURE_DEADLINE: Duration = Duration::from_secs(90);
/// How long the hog may take to allocate past the memory threshold, on a machine shared with
/// builds.
const HOG_DEADLINE: Duration = Duration::from_secs(180);
/// The transition period the tests configure: a pressure condition clears this long after
/// the pressure was last observed.
const TRANSITION: &str = "15s";

/// A managed node `pressure-<tag>` with the transition period above and `kubelet` lines.
fn start(tag: &str, kubelet: &str) -> Managed {
    start_with_args(tag, kubelet, &[])
}

/// [`start`] with `args` on the agent's command line.
fn start_with_args(tag: &str, kubelet: &str, args: &[&str]) -> Managed {
    let config = TestConfig::new().kubelet(&format!(
        "evictionPressureTransitionPeriod: {TRANSITION}\n{kubelet}"
    ));
    let node = Managed::start_with(&format!("pressure-{tag}"), &[], config, args);
    wait_for("the node registered", PRESSURE_DEADLINE, || {
        condition(&node, "Ready").filter(|c| c["status"] == "True")
    });
    node
}

/// The node's condition `kind` in the API server.
fn condition(node: &Managed, kind: &str) -> Option<Value> {
    let object = node.cluster.get_json(&["node", &node.node])?;
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
        .cloned()
}

/// Waits until condition `kind` has `status`, and returns it.
fn wait_condition(node: &Managed, kind: &str, status: &str) -> Value {
    wait_for(&format!("{kind}={status}"), PRESSURE_DEADLINE, || {
        condition(node, kind).filter(|c| c["status"] == status)
    })
}

/// Rewrites the agent's configuration with `kubelet` lines added and waits until it is in
/// force (the eviction settings apply live).
fn reconfigure(node: &Managed, kubelet: &str) {
    let edited = TestConfig {
        kubelet_extra: format!("{}{kubelet}", node.config.kubelet_extra),
        healthz_port: node.config.healthz_port,
        read_only_port: node.config.read_only_port,
        port: node.config.port,
        address: node.config.address.clone(),
        sergeant: node.config.sergeant.clone(),
    };
    let generation = node.agent.get_json("/debug/config")["generation"].clone();
    std::fs::write(&node.agent.config_path, edited.render()).expect("config edited");
    wait_for("the reload", PRESSURE_DEADLINE, || {
        let state = node.agent.get_json("/debug/config");
        (state["generation"] != generation).then_some(())
    });
}

/// A number from `/proc` (`/proc/sys/kernel/pid_max`), or the total of `/proc/loadavg`'s
/// `running/total` field.
fn processes() -> (u64, u64) {
    let max = std::fs::read_to_string("/proc/sys/kernel/pid_max").expect("pid_max");
    let loadavg = std::fs::read_to_string("/proc/loadavg").expect("loadavg");
    let total = loadavg
        .split_whitespace()
        .nth(3)
        .and_then(|f| f.split_once('/'))
        .and_then(|(_, total)| total.parse().ok())
        .expect("a process count");
    (max.trim().parse().expect("a pid_max"), total)
}

fn status_field<'a>(pod: &'a Value, field: &str) -> &'a str {
    pod["status"][field].as_str().unwrap_or_default()
}

/// The value of `/metrics` line `kubelet_evictions{eviction_signal="<signal>"}`.
fn evictions(node: &Managed, signal: &str) -> Option<f64> {
    node.metric(&format!(
        "kubelet_evictions{{eviction_signal=\"{signal}\"}}"
    ))
}

/// Creates pod `late-<node>` under `condition` and checks that it is refused with upstream's
/// reason. (The tests of this file run at once in one namespace: pod names carry the node's.)
fn assert_late_pod_refused(node: &Managed, condition: &str) {
    let name = format!("late-{}", node.node);
    node.create(&name, &sleeper());
    let late = node.wait_pod(&name, "refused", |p| status_field(p, "phase") == "Failed");
    assert_eq!(status_field(&late, "reason"), "Evicted");
    assert_eq!(
        status_field(&late, "message"),
        format!("The node had condition: [{condition}]. ")
    );
}

/// Waits until pod `name` has failed, checks that it was evicted for `resource` (with the
/// threshold quantity `threshold`, when given) in upstream's words, and returns the message.
fn wait_evicted(node: &Managed, name: &str, resource: &str, threshold: Option<&str>) -> String {
    let pod = node.wait_pod(name, "evicted", |p| status_field(p, "phase") == "Failed");
    assert_eq!(status_field(&pod, "reason"), "Evicted");
    let message = status_field(&pod, "message");
    let expected = format!(
        "The node was low on resource: {resource}. Threshold quantity: {}",
        threshold.map_or_else(String::new, |t| format!("{t}, available: "))
    );
    assert!(message.starts_with(&expected), "{message}");
    message.to_owned()
}

/// Checks that eviction `message` names `container` as using more `resource` than its request
/// (none), in upstream's words.
fn assert_names_greedy_container(message: &str, container: &str, resource: &str) {
    assert!(
        message.contains(&format!("Container {container} was using "))
            && message.ends_with(&format!(
                ", request is 0, has larger consumption of {resource}. "
            )),
        "{message}"
    );
}

/// Checks that pod `name` (`uid`) was never stopped (Running, the same pod, its container
/// never restarted) and that one pod only was evicted for `signal`.
fn assert_only_one_evicted(node: &Managed, (name, uid): (&str, &str), signal: &str) {
    assert_eq!(evictions(node, signal), Some(1.0), "one eviction only");
    let pod = node.pod(name).expect("the pod");
    assert_eq!(status_field(&pod, "phase"), "Running", "{name}");
    assert_eq!(pod["metadata"]["uid"], uid, "{name}");
    assert_eq!(
        pod["status"]["containerStatuses"][0]["restartCount"], 0,
        "{name}'s container never restarted"
    );
}

/// Waits for the Warning event `Evicted` of pod `name` (`uid`) saying `message`, and checks
/// that `kubelet_evictions` counts one eviction for `signal`.
fn assert_evicted_event(node: &Managed, (name, uid): (&str, &str), message: &str, signal: &str) {
    let event = node.wait_event((name, uid), "Evicted", |e| e["message"] == message);
    assert_eq!(event["type"], "Warning");
    assert_eq!(evictions(node, signal), Some(1.0));
}

#[test]
fn a_forking_pod_past_pid_available_is_evicted_and_new_pods_are_refused_meanwhile() {
    let node = start("pids", "");
    let quiet_uid = node.create("quiet", &sleeper());
    node.wait_pod("quiet", "running", |p| {
        status_field(p, "phase") == "Running"
    });
    assert_eq!(
        wait_condition(&node, "PIDPressure", "False")["reason"],
        "KubeletHasSufficientPID"
    );

    // Met once 400 more processes than now run on the machine; the forker starts 1500.
    let (max, now) = processes();
    let threshold = max - (now + 400);
    reconfigure(
        &node,
        &format!("evictionHard:\n  pid.available: \"{threshold}\"\n"),
    );
    let forker_uid = node.create(
        "forker",
        &format!(
            "  containers:\n  - name: forker\n    image: {SHELL}\n    command: [\"sh\", \"-c\", \
             \"i=0; while [ $i -lt 1500 ]; do sleep 3600 & i=$((i+1)); done; wait\"]\n"
        ),
    );
    let crossed = Instant::now();

    let pressure = wait_condition(&node, "PIDPressure", "True");
    let posted = crossed.elapsed();
    assert_eq!(pressure["reason"], "KubeletHasInsufficientPID");
    assert_eq!(
        pressure["message"],
        "kubelet has insufficient PID available"
    );

    // A pod created under pressure is refused with upstream's reason.
    assert_late_pod_refused(&node, "PIDPressure");

    let message = wait_evicted(&node, "forker", "pids", Some(&threshold.to_string()));
    let evicted = crossed.elapsed();
    assert_evicted_event(&node, ("forker", &forker_uid), &message, "pid.available");

    // The pressure is gone with the forker's processes; the condition clears after the
    // transition period, and the quiet pod never stopped.
    let cleared = wait_condition(&node, "PIDPressure", "False");
    assert_eq!(cleared["reason"], "KubeletHasSufficientPID");
    assert_only_one_evicted(&node, ("quiet", &quiet_uid), "pid.available");
    println!(
        "pid pressure: condition posted {:.1} s and pod evicted {:.1} s after the forker was created",
        posted.as_secs_f64(),
        evicted.as_secs_f64()
    );
}

#[test]
fn a_pod_allocating_past_memory_available_is_evicted_and_a_guaranteed_pod_survives() {
    let node = start("memory", "");
    let guaranteed = format!(
        "  containers:\n  - name: c\n    image: {SHELL}\n    command: [\"sleep\", \"3600\"]\n    \
         resources:\n      requests: {{cpu: 50m, memory: 64Mi}}\n      limits: {{cpu: 50m, memory: 64Mi}}\n"
    );
    let guaranteed_uid = node.create("guaranteed", &guaranteed);
    node.wait_pod("guaranteed", "running", |p| {
        status_field(p, "phase") == "Running"
    });

    // The threshold: 768 MiB less than the node has available now, as sergeant measures it.
    let summary = node.agent.get_json("/stats/summary");
    let available = summary["node"]["memory"]["availableBytes"]
        .as_u64()
        .expect("the node's available memory");
    let threshold = available - (768 << 20);
    reconfigure(
        &node,
        &format!("evictionHard:\n  memory.available: \"{threshold}\"\n"),
    );
    assert_eq!(
        condition(&node, "MemoryPressure").expect("the condition")["status"],
        "False"
    );

    // The hog holds 2 GiB of anonymous memory (busybox tail keeps an unterminated line), four
    // pipes at once: one fills at some 40 MB/s on a busy machine.
    let hog_uid = node.create(
        "hog",
        &format!(
            "  containers:\n  - name: hog\n    image: {SHELL}\n    command: [\"sh\", \"-c\", \
             \"for i in 1 2 3 4; do {{ head -c 536870912 /dev/zero; sleep 3600; }} | tail & done; \
             wait\"]\n"
        ),
    );
    let crossed = Instant::now();
    let pressure = wait_for("MemoryPressure=True", HOG_DEADLINE, || {
        condition(&node, "MemoryPressure").filter(|c| c["status"] == "True")
    });
    let posted = crossed.elapsed();
    assert_eq!(pressure["reason"], "KubeletHasInsufficientMemory");
    assert_eq!(
        pressure["message"],
        "kubelet has insufficient memory available"
    );

    let message = wait_evicted(&node, "hog", "memory", None);
    let evicted = crossed.elapsed();
    assert_names_greedy_container(&message, "hog", "memory");
    assert_evicted_event(&node, ("hog", &hog_uid), &message, "memory.available");

    let cleared = wait_condition(&node, "MemoryPressure", "False");
    assert_eq!(cleared["reason"], "KubeletHasSufficientMemory");
    assert_only_one_evicted(&node, ("guaranteed", &guaranteed_uid), "memory.available");
    println!(
        "memory pressure: condition posted {:.1} s and pod evicted {:.1} s after the hog was created",
        posted.as_secs_f64(),
        evicted.as_secs_f64()
    );
}

#[test]
fn an_allocatable_memory_threshold_is_observed_from_the_pods_cgroup() {
    let node = start("allocatable", "");
    let pod_uid = node.create("pod", &sleeper());
    node.wait_pod("pod", "running", |p| status_field(p, "phase") == "Running");
    // Met as soon as the pods' cgroup (`kubepods`, which holds at least this pod) uses any
    // of its limit: the signal is measured, not assumed.
    reconfigure(
        &node,
        "evictionHard:\n  allocatableMemory.available: \"100%\"\n",
    );
    let pressure = wait_condition(&node, "MemoryPressure", "True");
    assert_eq!(pressure["reason"], "KubeletHasInsufficientMemory");
    let message = wait_evicted(&node, "pod", "memory", None);
    assert_evicted_event(
        &node,
        ("pod", &pod_uid),
        &message,
        "allocatableMemory.available",
    );
}

const MI: u64 = 1024 * 1024;

/// A tmpfs of a few hundred MiB mounted on a temporary directory, the agent's root directory
/// (nodefs) in the disk test; unmounted when dropped, even after a failed assertion (lazily:
/// a mount left under it by a pod goes with it).
struct SmallFs {
    dir: tempfile::TempDir,
}

impl SmallFs {
    /// A tmpfs of `mib` MiB.
    fn mount(mib: u64) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let options = format!("size={mib}m,mode=755");
        mount(
            Some("tmpfs"),
            dir.path(),
            Some("tmpfs"),
            MsFlags::empty(),
            Some(options.as_str()),
        )
        .expect("a tmpfs mounted (needs root)");
        Self { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Capacity and available bytes now (statvfs).
    fn space(&self) -> (u64, u64) {
        let stats = nix::sys::statvfs::statvfs(self.path()).expect("statvfs of the tmpfs");
        let block = stats.fragment_size();
        (stats.blocks() * block, stats.blocks_available() * block)
    }

    /// Where pod `uid`'s emptyDir `name` is.
    fn empty_dir(&self, uid: &str, name: &str) -> PathBuf {
        self.path()
            .join("pods")
            .join(uid)
            .join("volumes/kubernetes.io~empty-dir")
            .join(name)
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = umount2(self.path(), MntFlags::MNT_DETACH);
    }
}

/// A pod spec whose container `name` writes `bytes` of zeros into its emptyDir `data` and
/// sleeps.
fn writer(name: &str, bytes: u64) -> String {
    format!(
        "  containers:\n  - name: {name}\n    image: {SHELL}\n    command: [\"sh\", \"-c\", \
         \"head -c {bytes} /dev/zero > /data/fill; sleep 3600\"]\n    volumeMounts:\n    \
         - {{name: data, mountPath: /data}}\n  volumes:\n  - {{name: data, emptyDir: {{}}}}\n"
    )
}

#[test]
fn a_pod_filling_an_empty_dir_past_nodefs_available_is_evicted_and_its_space_given_back() {
    // Declared first, dropped last: the node and its pods go before the filesystem.
    let fs = SmallFs::mount(256);
    let (capacity, at_start) = fs.space();
    // Met once 128 MiB of what is available now are used; the filler writes 160 MiB, the
    // quiet pod 1 MiB.
    let threshold_mib = (at_start - 128 * MI) / MI;
    let root = fs.path().to_string_lossy().into_owned();
    let node = start_with_args(
        "disk",
        &format!("evictionHard:\n  nodefs.available: \"{threshold_mib}Mi\"\n"),
        &["--root-dir", &root],
    );
    // Not "quiet": the PID test's quiet pod may exist at the same time.
    let quiet_uid = node.create("quiet-disk", &writer("quiet-disk", MI));
    node.wait_pod("quiet-disk", "running", |p| {
        status_field(p, "phase") == "Running"
    });
    let quiet_file = fs.empty_dir(&quiet_uid, "data").join("fill");
    wait_for("the quiet pod's file", PRESSURE_DEADLINE, || {
        std::fs::metadata(&quiet_file)
            .ok()
            .filter(|m| m.len() == MI)
    });
    assert_eq!(
        wait_condition(&node, "DiskPressure", "False")["reason"],
        "KubeletHasNoDiskPressure"
    );
    let (_, before) = fs.space();

    let filler_uid = node.create("filler", &writer("filler", 160 * MI));
    let crossed = Instant::now();
    let filler_dir = fs.empty_dir(&filler_uid, "data");
    // Written in well under a second; the next stats sample is up to 10 s away.
    let during = wait_for("the filler's file written", PRESSURE_DEADLINE, || {
        std::fs::metadata(filler_dir.join("fill"))
            .ok()
            .filter(|m| m.len() == 160 * MI)
            .map(|_| fs.space().1)
    });
    let pressure = wait_condition(&node, "DiskPressure", "True");
    let posted = crossed.elapsed();
    assert_eq!(pressure["reason"], "KubeletHasDiskPressure");
    assert_eq!(pressure["message"], "kubelet has disk pressure");

    // A pod created under pressure is refused with upstream's reason.
    assert_late_pod_refused(&node, "DiskPressure");

    let threshold = format!("{threshold_mib}Mi");
    let message = wait_evicted(&node, "filler", "ephemeral-storage", Some(&threshold));
    let evicted = crossed.elapsed();
    assert_names_greedy_container(&message, "filler", "ephemeral-storage");
    assert_evicted_event(&node, ("filler", &filler_uid), &message, "nodefs.available");

    // The evicted pod's emptyDir is gone and its space given back, while its object is still
    // there; the quiet pod's emptyDir stays.
    wait_for("the filler's emptyDir removed", PRESSURE_DEADLINE, || {
        (!filler_dir.exists()).then_some(())
    });
    let (_, after) = fs.space();
    let freed = crossed.elapsed();
    assert!(
        after + 8 * MI >= before,
        "available {after} after the eviction, {before} before the filler"
    );
    assert!(
        node.pod("filler").is_some(),
        "the evicted pod is still known"
    );
    assert_eq!(
        std::fs::metadata(&quiet_file).map(|m| m.len()).ok(),
        Some(MI)
    );

    let cleared = wait_condition(&node, "DiskPressure", "False");
    let cleared_after = crossed.elapsed();
    assert_eq!(cleared["reason"], "KubeletHasNoDiskPressure");
    assert_only_one_evicted(&node, ("quiet-disk", &quiet_uid), "nodefs.available");
    println!(
        "disk pressure on a {} MiB nodefs (threshold {threshold_mib}Mi): condition posted \
         {:.1} s, pod evicted {:.1} s, emptyDir removed {:.1} s, condition cleared {:.1} s \
         after the filler was created; available {} MiB before, {} MiB filled, {} MiB \
         after: {} MiB given back",
        capacity / MI,
        posted.as_secs_f64(),
        evicted.as_secs_f64(),
        freed.as_secs_f64(),
        cleared_after.as_secs_f64(),
        before / MI,
        during / MI,
        after / MI,
        after.saturating_sub(during) / MI
    );
}
