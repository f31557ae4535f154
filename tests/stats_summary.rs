//! `/stats/summary` on a standalone sergeant and the real containerd: the node section holds
//! the kernel's numbers, a pod with a busy and an idle container shows both, the busy one
//! using measurably more CPU, what a container logs shows within the pods' refresh period,
//! a pod's volumes with what they use, and the `pods` system container (the pods' cgroup).

mod common;

use std::time::Duration;

use common::cgroups::{number, read, CleanRoot};
use common::node::{manifest, phase, Node, POD_DEADLINE, SHELL};
use common::wait_for;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::Value;

/// How often sergeant reads the pods' numbers again in the background (its
/// `stats::sampler::REFRESH_PERIOD`, cAdvisor's housekeeping interval upstream).
const REFRESH_PERIOD: Duration = Duration::from_secs(10);

/// Slack on top of the refresh period: one sampling of the runtime, and a loaded machine.
const REFRESH_SLACK: Duration = Duration::from_secs(5);

/// How long the busy container may take to show a CPU rate above the idle one's: a rate needs
/// two samples, and the idle container's first one still carries its start.
const RATE_DEADLINE: Duration = Duration::from_secs(45);

/// A CPU-bound container should get at least a tenth of a core on any test machine.
const BUSY_NANO_CORES: u64 = 100_000_000;

fn u64_at(value: &Value, pointer: &str) -> u64 {
    value
        .pointer(pointer)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("{pointer} is not a number in {value:#}"))
}

fn summary(node: &Node) -> Value {
    node.agent.get_json("/stats/summary")
}

/// The summary's entry of the pod `name` (before the node suffix), if listed.
fn pod_entry(summary: &Value, full_name: &str) -> Option<Value> {
    summary["pods"]
        .as_array()?
        .iter()
        .find(|p| p["podRef"]["name"] == full_name)
        .cloned()
}

fn container_entry<'a>(pod: &'a Value, name: &str) -> Option<&'a Value> {
    pod["containers"]
        .as_array()?
        .iter()
        .find(|c| c["name"] == name)
}

#[test]
fn the_node_section_has_the_kernels_numbers() {
    let node = Node::start("stats-node");
    let first = summary(&node);
    let n = &first["node"];
    assert_eq!(n["nodeName"], "node-stats-node");
    let boot: Time = serde_json::from_value(n["startTime"].clone()).expect("an RFC 3339 startTime");
    let cpu_time: Time =
        serde_json::from_value(n["cpu"]["time"].clone()).expect("an RFC 3339 cpu.time");
    assert!(
        boot.0 < cpu_time.0,
        "booted {boot:?} after the sample {cpu_time:?}"
    );

    let capacity = u64_at(n, "/fs/capacityBytes");
    let available = u64_at(n, "/fs/availableBytes");
    assert!(capacity > available && available > 0, "fs: {}", n["fs"]);
    assert!(u64_at(n, "/fs/inodes") >= u64_at(n, "/fs/inodesFree"));
    assert!(
        u64_at(n, "/runtime/imageFs/capacityBytes") > 0,
        "{}",
        n["runtime"]
    );
    // The runtime measures its image filesystem in the background (containerd: every 10 s),
    // so a freshly started one reports 0 for a while.
    wait_for("the image filesystem's usage", RATE_DEADLINE, || {
        let summary = summary(&node);
        (u64_at(&summary["node"], "/runtime/imageFs/usedBytes") > 0).then_some(())
    });

    let working_set = u64_at(n, "/memory/workingSetBytes");
    assert!(working_set > 0);
    assert!(u64_at(n, "/memory/usageBytes") >= working_set);
    assert!(u64_at(n, "/memory/availableBytes") > 0);
    assert!(u64_at(n, "/memory/pageFaults") > 0);

    assert!(u64_at(n, "/rlimit/maxpid") >= u64_at(n, "/rlimit/curproc"));
    assert!(u64_at(n, "/rlimit/curproc") > 0);
    assert!(
        n["network"]["interfaces"]
            .as_array()
            .is_some_and(|all| all.iter().all(|i| i["name"] != "lo")),
        "loopback is left out: {}",
        n["network"]
    );

    let used_before = u64_at(n, "/cpu/usageCoreNanoSeconds");
    let later = wait_for(
        "the node's CPU time to grow",
        Duration::from_secs(10),
        || {
            let later = summary(&node);
            (u64_at(&later["node"], "/cpu/usageCoreNanoSeconds") > used_before).then_some(later)
        },
    );
    // Two samples more than a second apart give a rate.
    wait_for("a node CPU rate", Duration::from_secs(10), || {
        summary(&node)["node"]["cpu"]["usageNanoCores"]
            .as_u64()
            .filter(|r| *r > 0)
    });
    assert!(later["node"]["cpu"]["time"].is_string());
}

#[test]
fn a_busy_container_uses_more_cpu_than_an_idle_one() {
    let node = Node::start("stats-pods");
    let spec = format!(
        "  containers:\n\
         \x20 - name: busy\n    image: {SHELL}\n    command: [sh, -c, 'while :; do :; done']\n\
         \x20 - name: idle\n    image: {SHELL}\n    command: [sh, -c, 'echo idle and logging; exec sleep 3600']\n"
    );
    node.write("load.yaml", &manifest("load", &spec));
    let pod = node.wait_pod("load", "running", |p| phase(p) == "Running");
    let full_name = pod["metadata"]["name"]
        .as_str()
        .expect("a pod name")
        .to_string();
    let uid = pod["metadata"]["uid"]
        .as_str()
        .expect("a pod uid")
        .to_string();

    let listed = wait_for(
        "the pod in the summary with both containers",
        POD_DEADLINE,
        || {
            let entry = pod_entry(&summary(&node), &full_name)?;
            (container_entry(&entry, "busy").is_some() && container_entry(&entry, "idle").is_some())
                .then_some(entry)
        },
    );
    assert_eq!(listed["podRef"]["uid"], uid.as_str());
    assert_eq!(listed["podRef"]["namespace"], "default");
    let started: Time =
        serde_json::from_value(listed["startTime"].clone()).expect("an RFC 3339 pod startTime");
    let container_started: Time =
        serde_json::from_value(container_entry(&listed, "busy").unwrap()["startTime"].clone())
            .expect("an RFC 3339 container startTime");
    assert!(started.0.as_second() <= container_started.0.as_second() + 1);

    let (busy, idle, entry) = wait_for(
        "the busy container to out-use the idle one",
        RATE_DEADLINE,
        || {
            let entry = pod_entry(&summary(&node), &full_name)?;
            let rate = |name| container_entry(&entry, name)?["cpu"]["usageNanoCores"].as_u64();
            let (busy, idle) = (rate("busy")?, rate("idle")?);
            // The idle container's first rate still carries its start; wait for it to settle.
            (busy > BUSY_NANO_CORES && busy > 5 * idle.max(1_000_000))
                .then_some((busy, idle, entry))
        },
    );
    assert!(busy > idle, "busy {busy} vs idle {idle}");
    let pod_rate = u64_at(&entry, "/cpu/usageNanoCores");
    assert!(
        pod_rate >= busy,
        "the pod's rate {pod_rate} sums its containers' ({busy})"
    );

    let busy_entry = container_entry(&entry, "busy").unwrap();
    assert!(
        u64_at(busy_entry, "/memory/workingSetBytes") > 0,
        "{busy_entry}"
    );
    assert!(
        u64_at(&entry, "/memory/workingSetBytes") >= u64_at(busy_entry, "/memory/workingSetBytes")
    );
    assert!(
        u64_at(busy_entry, "/rootfs/capacityBytes") > 0,
        "{busy_entry}"
    );

    let idle_entry = container_entry(&entry, "idle").unwrap();
    assert!(
        u64_at(idle_entry, "/logs/usedBytes") > 0,
        "the idle container logged: {idle_entry}"
    );
    let ephemeral = u64_at(&entry, "/ephemeral-storage/usedBytes");
    assert!(
        ephemeral >= u64_at(idle_entry, "/logs/usedBytes"),
        "{}",
        entry["ephemeral-storage"]
    );
    assert!(u64_at(&entry, "/ephemeral-storage/capacityBytes") > 0);

    assert_eq!(
        entry["network"]["name"], "eth0",
        "the pod's own network: {}",
        entry["network"]
    );
    assert!(
        u64_at(&entry, "/network/rxBytes") > 0,
        "{}",
        entry["network"]
    );
    let sampled: Time = serde_json::from_value(busy_entry["rootfs"]["time"].clone())
        .expect("an RFC 3339 rootfs time");
    assert!(
        sampled.0 >= started.0,
        "rootfs sampled at {sampled:?}, before the pod started"
    );

    let (status, resource) = node.agent.get("/metrics/resource");
    assert_eq!(status, 200, "{resource}");
    assert!(resource.contains("resource_scrape_error 0\n"), "{resource}");
    let busy_memory = format!(
        "container_memory_working_set_bytes{{container=\"busy\",namespace=\"default\",pod=\"{full_name}\"}} "
    );
    assert!(
        resource.lines().any(|l| l.starts_with(&busy_memory)),
        "{busy_memory} in:\n{resource}"
    );

    let cpu_before = u64_at(busy_entry, "/cpu/usageCoreNanoSeconds");
    wait_for(
        "the busy container's CPU time to grow",
        REFRESH_PERIOD + REFRESH_SLACK,
        || {
            let entry = pod_entry(&summary(&node), &full_name)?;
            (u64_at(
                container_entry(&entry, "busy")?,
                "/cpu/usageCoreNanoSeconds",
            ) > cpu_before)
                .then_some(())
        },
    );

    node.remove("load.yaml");
    wait_for("the removed pod to leave the summary", POD_DEADLINE, || {
        pod_entry(&summary(&node), &full_name)
            .is_none()
            .then_some(())
    });
}

#[test]
fn what_a_container_logs_shows_within_the_refresh_period() {
    const LOGGED: u64 = 1024 * 1024;
    let trigger = tempfile::tempdir().expect("a trigger dir");
    let node = Node::start("stats-logs");
    let spec = format!(
        "  containers:\n\
         \x20 - name: logger\n    image: {SHELL}\n    command: [sh, -c, 'until [ -e /trigger/go ]; do sleep 0.1; done; yes logging | head -c {LOGGED}; exec sleep 3600']\n\
         \x20   volumeMounts: [{{name: trigger, mountPath: /trigger}}]\n\
         \x20 volumes: [{{name: trigger, hostPath: {{path: {}}}}}]\n",
        trigger.path().display()
    );
    node.write("logger.yaml", &manifest("logger", &spec));
    let pod = node.wait_pod("logger", "running", |p| phase(p) == "Running");
    let full_name = pod["metadata"]["name"].as_str().expect("a pod name");
    let logs_used = |summary: &Value| {
        let entry = pod_entry(summary, full_name)?;
        container_entry(&entry, "logger")?["logs"]["usedBytes"].as_u64()
    };
    let before = wait_for("the logger's logs in the summary", POD_DEADLINE, || {
        logs_used(&summary(&node))
    });
    assert!(before < LOGGED, "nothing logged yet, but {before} bytes");

    std::fs::write(trigger.path().join("go"), "").expect("the trigger written");
    let written = std::time::Instant::now();
    let after = wait_for(
        "the logged megabyte in logs.usedBytes",
        REFRESH_PERIOD + REFRESH_SLACK,
        || logs_used(&summary(&node)).filter(|used| *used >= LOGGED),
    );
    println!(
        "logs.usedBytes {before} -> {after} within {:?} of the trigger",
        written.elapsed()
    );
    let metrics = node.agent.get("/metrics").1;
    let samples = metrics
        .lines()
        .find_map(|l| l.strip_prefix("sergeant_stats_sample_duration_seconds_count "))
        .and_then(|v| v.trim().parse::<u64>().ok());
    assert!(
        samples.is_some_and(|n| n >= 2),
        "the background samples are timed: {samples:?}"
    );
    let entry = pod_entry(&summary(&node), full_name).expect("the pod still listed");
    assert!(
        u64_at(&entry, "/ephemeral-storage/usedBytes") >= after,
        "ephemeral storage counts the logs: {}",
        entry["ephemeral-storage"]
    );
}

#[test]
fn a_pods_volumes_are_listed_and_its_disk_volume_counts_as_ephemeral_storage() {
    const WRITTEN: u64 = 2 * 1024 * 1024;
    let node = Node::start("stats-volumes");
    let spec = format!(
        "  containers:\n\
         \x20 - name: writer\n    image: {SHELL}\n    command: [sh, -c, 'head -c {WRITTEN} /dev/zero > /data/blob; head -c 4096 /dev/zero > /scratch/blob; exec sleep 3600']\n\
         \x20   volumeMounts: [{{name: data, mountPath: /data}}, {{name: scratch, mountPath: /scratch}}]\n\
         \x20 volumes: [{{name: data, emptyDir: {{}}}}, {{name: scratch, emptyDir: {{medium: Memory, sizeLimit: 1Mi}}}}]\n"
    );
    node.write("volumes.yaml", &manifest("volumes", &spec));
    let pod = node.wait_pod("volumes", "running", |p| phase(p) == "Running");
    let full_name = pod["metadata"]["name"].as_str().expect("a pod name");
    let volume = |entry: &Value, name: &str| {
        entry["volume"]
            .as_array()?
            .iter()
            .find(|v| v["name"] == name)
            .cloned()
    };
    let entry = wait_for(
        "the written emptyDir in the summary's volumes",
        POD_DEADLINE + REFRESH_PERIOD,
        || {
            let entry = pod_entry(&summary(&node), full_name)?;
            let data = volume(&entry, "data")?;
            (data["usedBytes"].as_u64()? >= WRITTEN).then_some(entry)
        },
    );
    let data = volume(&entry, "data").expect("the data volume");
    let scratch = volume(&entry, "scratch").expect("the memory volume listed too");
    assert_eq!(
        u64_at(&scratch, "/capacityBytes"),
        1024 * 1024,
        "the memory emptyDir is its own 1Mi tmpfs: {scratch}"
    );
    assert!(u64_at(&scratch, "/usedBytes") >= 4096, "{scratch}");
    assert!(u64_at(&data, "/capacityBytes") > WRITTEN, "{data}");
    let ephemeral = u64_at(&entry, "/ephemeral-storage/usedBytes");
    assert!(
        ephemeral >= u64_at(&data, "/usedBytes"),
        "ephemeral storage counts the disk emptyDir: {ephemeral} in {entry:#}"
    );
}

#[test]
fn the_pods_system_container_is_the_cgroup_the_pods_run_in() {
    let root = format!("/sergeant-stats-{}", std::process::id());
    let _clean = CleanRoot(root.clone());
    let node = Node::start_with("stats-system", &format!("cgroupRoot: {root}\n"));
    let kubepods = format!("{root}/kubepods");
    let spec = format!(
        "  containers:\n  - name: busy\n    image: {SHELL}\n    command: [sh, -c, 'while :; do :; done']\n"
    );
    node.write("spin.yaml", &manifest("spin", &spec));
    node.wait_pod("spin", "running", |p| phase(p) == "Running");
    let pods = |summary: &Value| {
        summary["node"]["systemContainers"]
            .as_array()
            .and_then(|all| all.iter().find(|c| c["name"] == "pods"))
            .cloned()
    };
    // Only the pod spins in kubepods: a rate of a tenth of a core is the pods' cgroup, not the
    // node's.
    let entry = wait_for(
        "the pods' cgroup busy in the summary",
        RATE_DEADLINE,
        || {
            pods(&summary(&node)).filter(|p| {
                p["cpu"]["usageNanoCores"]
                    .as_u64()
                    .is_some_and(|rate| rate > BUSY_NANO_CORES)
            })
        },
    );
    let used = u64_at(&entry, "/cpu/usageCoreNanoSeconds");
    let now = u64::try_from(number(&read("cpuacct", &kubepods, "cpuacct.usage"))).expect("usage");
    assert!(
        used > 0 && used <= now,
        "summary {used} ns, cgroup now {now} ns"
    );
    let working_set = u64_at(&entry, "/memory/workingSetBytes");
    assert!(working_set > 0 && working_set <= u64_at(&entry, "/memory/usageBytes"));
    let limit =
        u64::try_from(number(&read("memory", &kubepods, "memory.limit_in_bytes"))).expect("limit");
    assert_eq!(
        u64_at(&entry, "/memory/availableBytes") + working_set,
        limit,
        "available is kubepods' limit (the allocatable) less its working set"
    );
    let started: Time =
        serde_json::from_value(entry["startTime"].clone()).expect("an RFC 3339 startTime");
    let sampled: Time =
        serde_json::from_value(entry["cpu"]["time"].clone()).expect("an RFC 3339 cpu.time");
    assert!(started.0 <= sampled.0, "{started:?} after {sampled:?}");
}
