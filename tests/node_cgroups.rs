//! The node's cgroup tree on real containerd and the real cgroup file system, read back from
//! the kernel's files: `kubepods` limited to the node's allocatable (capacity less
//! `kubeReserved` and `systemReserved`, pids included) under `enforceNodeAllocatable: [pods]`,
//! the QoS cgroups with upstream's cpu shares (Burstable: its pods' cpu requests; BestEffort:
//! the minimum) following pods as they come and go, each pod in its QoS cgroup with its
//! pod-level limits, and a finished pod freeing its admission share.
//!
//! Needs the private containerd `tests/run.sh` starts (SERGEANT_CRI_ENDPOINT); runs as root.

mod common;

use std::time::Duration;

use common::cgroups::{cgroup_dir, number, read, CleanRoot};
use common::node::{manifest, phase, Node, SHELL};
use common::wait_for;

/// How long a cgroup change may take to follow a pod change.
const DEADLINE: Duration = Duration::from_secs(30);

fn pod(name: &str, resources: &str, extra: &str) -> String {
    manifest(
        name,
        &format!(
            "{extra}  containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n{resources}"
        ),
    )
}

#[test]
fn the_qos_tree_follows_the_pods_and_kubepods_holds_the_allocatable() {
    let root = format!("/sergeant-qos-{}", std::process::id());
    let _clean = CleanRoot(root.clone());
    let node = Node::start_with(
        "qos",
        &format!(
            "cgroupRoot: {root}\nkubeReserved:\n  cpu: 500m\n  memory: 1Gi\n  pid: \"1000\"\nsystemReserved:\n  memory: 512Mi\n"
        ),
    );
    let kubepods = format!("{root}/kubepods");
    let cpus = common::machine::online_cpus();
    let shares = |millis: i64| (millis * 1024 / 1000).max(2);
    wait_for("kubepods limited", DEADLINE, || {
        cgroup_dir("cpu", &kubepods)
            .join("cpu.shares")
            .exists()
            .then_some(())
    });
    assert_eq!(
        number(&read("cpu", &kubepods, "cpu.shares")),
        shares(cpus * 1000 - 500),
        "the allocatable cpu"
    );
    let mem_total_kib: i64 = std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("MemTotal");
    let allocatable = mem_total_kib * 1024 - (1 << 30) - (512 << 20);
    let limit = number(&read("memory", &kubepods, "memory.limit_in_bytes"));
    assert!(
        limit <= allocatable && allocatable - limit < 4096,
        "memory limit {limit}, allocatable {allocatable} (the kernel rounds to pages)"
    );
    let pid_max = number(
        std::fs::read_to_string("/proc/sys/kernel/pid_max")
            .unwrap()
            .trim(),
    );
    assert_eq!(number(&read("pids", &kubepods, "pids.max")), pid_max - 1000);

    let guaranteed = "    resources:\n      requests: {cpu: 100m, memory: 64Mi}\n      limits: {cpu: 100m, memory: 64Mi}\n";
    node.write("g.yaml", &pod("g", guaranteed, ""));
    node.write(
        "b.yaml",
        &pod("b", "    resources:\n      requests: {cpu: 250m}\n", ""),
    );
    node.write("e.yaml", &pod("e", "", ""));
    let uid = |name: &str| {
        let pod = node.wait_pod(name, "Running", |p| phase(p) == "Running");
        pod["metadata"]["uid"].as_str().unwrap().to_owned()
    };
    let (g, b, e) = (uid("g"), uid("b"), uid("e"));
    let burstable = format!("{kubepods}/burstable");
    wait_for("burstable shares from its pod's request", DEADLINE, || {
        (read("cpu", &burstable, "cpu.shares") == "256").then_some(())
    });
    assert_eq!(
        read("cpu", &format!("{kubepods}/besteffort"), "cpu.shares"),
        "2"
    );
    let pod_cgroup = format!("{kubepods}/pod{g}");
    assert_eq!(read("cpu", &pod_cgroup, "cpu.cfs_quota_us"), "10000");
    assert_eq!(read("cpu", &pod_cgroup, "cpu.shares"), "102");
    assert_eq!(
        read("memory", &pod_cgroup, "memory.limit_in_bytes"),
        (64 << 20).to_string()
    );
    assert!(cgroup_dir("cpu", &format!("{burstable}/pod{b}")).is_dir());
    assert!(cgroup_dir("cpu", &format!("{kubepods}/besteffort/pod{e}")).is_dir());

    node.remove("b.yaml");
    wait_for(
        "burstable back to the minimum once its pod went",
        DEADLINE,
        || (read("cpu", &burstable, "cpu.shares") == "2").then_some(()),
    );
}

#[test]
fn a_finished_pod_frees_its_share_at_admission() {
    let node = Node::start_with("finished", "maxPods: 2\n");
    node.write(
        "done.yaml",
        &pod("done", "", "  restartPolicy: Never\n")
            .replace("[sleep, '3600']", "[sh, -c, 'exit 0']"),
    );
    node.wait_pod("done", "Succeeded", |p| phase(p) == "Succeeded");
    node.write("first.yaml", &pod("first", "", ""));
    node.wait_pod("first", "Running", |p| phase(p) == "Running");
    node.write("second.yaml", &pod("second", "", ""));
    let second = node.wait_pod("second", "Running or refused", |p| {
        phase(p) == "Running" || phase(p) == "Failed"
    });
    assert_eq!(
        phase(&second),
        "Running",
        "the Succeeded pod no longer counts against maxPods: {second}"
    );
}

/// A pod whose pod-level resources make it Guaranteed while its container sets none.
const POD_LEVEL: &str = "  resources:\n    requests: {cpu: 100m, memory: 64Mi}\n    limits: {cpu: 100m, memory: 64Mi}\n";

#[test]
fn with_pod_level_resources_off_a_pod_is_classed_and_limited_by_its_containers_alone() {
    let root = format!("/sergeant-plr-{}", std::process::id());
    let _clean = CleanRoot(root.clone());
    for (gate, class, cgroup_parent) in [
        ("true", "Guaranteed", ""),
        ("false", "BestEffort", "/besteffort"),
    ] {
        let node = Node::start_with(
            &format!("plr-{gate}"),
            &format!("cgroupRoot: {root}\nfeatureGates:\n  PodLevelResources: {gate}\n"),
        );
        node.write("plr.yaml", &pod("plr", "", POD_LEVEL));
        let running = node.wait_pod("plr", "Running", |p| phase(p) == "Running");
        assert_eq!(running["status"]["qosClass"], class, "{running}");
        let uid = running["metadata"]["uid"].as_str().unwrap();
        let pod_cgroup = format!("{root}/kubepods{cgroup_parent}/pod{uid}");
        let limit = read("memory", &pod_cgroup, "memory.limit_in_bytes");
        if gate == "true" {
            assert_eq!(limit, (64 << 20).to_string(), "the pod-level limit");
        } else {
            assert!(
                number(&limit) > 1 << 40,
                "no limit from the unread pod-level resources: {limit}"
            );
        }
        let (_, log) = node.agent.get("/debug/config");
        assert!(
            !log.contains("featureGates.PodLevelResources"),
            "a gate sergeant switches is not warned about: {log}"
        );
    }
}
