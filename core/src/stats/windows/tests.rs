use k8s_cri::v1 as cri;

use super::cri_time;
use super::pods::{by_sandbox, container, PodUsage};
use super::system::{commit_memory, pods, CommitMemory, GLOBAL_COMMIT_MEMORY, PODS};
use crate::stats::summary::{CpuStats, MemoryStats, PodReference, PodStats};

const NOW: i64 = 1_700_000_000_000_000_000;
const AT: i64 = 1_700_000_000_500_000_000;

fn value(value: u64) -> Option<cri::UInt64Value> {
    Some(cri::UInt64Value { value })
}

fn windows_container(id: &str) -> cri::WindowsContainerStats {
    cri::WindowsContainerStats {
        attributes: Some(cri::ContainerAttributes {
            id: id.to_owned(),
            ..Default::default()
        }),
        cpu: Some(cri::WindowsCpuUsage {
            timestamp: AT,
            usage_core_nano_seconds: value(7_000),
            usage_nano_cores: value(1_000_000),
        }),
        memory: Some(cri::WindowsMemoryUsage {
            timestamp: AT,
            working_set_bytes: value(4096),
            available_bytes: value(100),
            page_faults: value(3),
            commit_memory_bytes: value(6144),
        }),
        writable_layer: Some(cri::WindowsFilesystemUsage {
            timestamp: AT,
            fs_id: Some(cri::FilesystemIdentifier {
                mountpoint: r"C:\ProgramData\containerd".to_owned(),
            }),
            used_bytes: value(512),
        }),
    }
}

fn sandbox(id: &str, windows: Option<cri::WindowsPodSandboxStats>) -> cri::PodSandboxStats {
    cri::PodSandboxStats {
        attributes: Some(cri::PodSandboxAttributes {
            id: id.to_owned(),
            ..Default::default()
        }),
        linux: None,
        windows,
    }
}

fn windows_pod() -> cri::WindowsPodSandboxStats {
    let interface = |name: &str, rx| cri::WindowsNetworkInterfaceUsage {
        name: name.to_owned(),
        rx_bytes: value(rx),
        tx_bytes: value(rx * 2),
        ..Default::default()
    };
    cri::WindowsPodSandboxStats {
        cpu: Some(cri::WindowsCpuUsage {
            timestamp: 0,
            usage_core_nano_seconds: value(9_000),
            usage_nano_cores: None,
        }),
        memory: Some(cri::WindowsMemoryUsage {
            timestamp: AT,
            working_set_bytes: value(8192),
            available_bytes: None,
            page_faults: value(5),
            commit_memory_bytes: value(12_288),
        }),
        network: Some(cri::WindowsNetworkUsage {
            timestamp: AT,
            default_interface: Some(interface("eth0", 10)),
            interfaces: vec![interface("eth0", 10), interface("eth1", 1)],
        }),
        process: None,
        containers: vec![windows_container("c1")],
    }
}

#[test]
fn a_windows_pods_cpu_memory_and_network_are_the_runtimes() {
    let list = [
        sandbox("win", Some(windows_pod())),
        sandbox("linux", None),
        cri::PodSandboxStats::default(),
    ];
    let usage = by_sandbox(&list, NOW);
    assert_eq!(usage.len(), 1, "a Linux half or no attributes: left out");
    let pod: &PodUsage = &usage["win"];
    let cpu = pod.cpu.as_ref().expect("cpu");
    assert_eq!(cpu.usage_core_nano_seconds, Some(9_000));
    assert_eq!(cpu.usage_nano_cores, None);
    assert_eq!(
        cpu.time,
        cri_time(NOW, 0),
        "no timestamp: the summary's instant"
    );
    let memory = pod.memory.as_ref().expect("memory");
    assert_eq!(memory.usage_bytes, Some(12_288), "the commit charge");
    assert_eq!(memory.working_set_bytes, Some(8192));
    assert_eq!(memory.page_faults, Some(5));
    assert_eq!((memory.available_bytes, memory.rss_bytes), (None, None));
    assert_eq!(memory.time, cri_time(AT, 0));
    let network = pod.network.as_ref().expect("network");
    assert_eq!(network.default.name, "eth0");
    assert_eq!(
        (network.default.rx_bytes, network.default.tx_bytes),
        (Some(10), Some(20))
    );
    let names: Vec<&str> = network.interfaces.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["eth0", "eth1"]);
    assert_eq!(pod.containers.len(), 1);
}

#[test]
fn a_windows_container_reads_as_a_list_container_stats_entry() {
    let stats = container(&windows_container("c1"));
    assert_eq!(stats.attributes.map(|a| a.id), Some("c1".to_owned()));
    let cpu = stats.cpu.expect("cpu");
    assert_eq!(cpu.usage_nano_cores, value(1_000_000));
    assert_eq!(cpu.usage_core_nano_seconds, value(7_000));
    let memory = stats.memory.expect("memory");
    assert_eq!(
        memory.usage_bytes,
        value(6144),
        "the commit charge is the usage"
    );
    assert_eq!(memory.working_set_bytes, value(4096));
    assert_eq!(memory.available_bytes, value(100));
    assert_eq!(memory.page_faults, value(3));
    assert_eq!((memory.rss_bytes, memory.major_page_faults), (None, None));
    let layer = stats.writable_layer.expect("writable layer");
    assert_eq!(layer.used_bytes, value(512));
    assert_eq!(layer.inodes_used, None);
    assert_eq!(
        layer.fs_id.map(|id| id.mountpoint),
        Some(r"C:\ProgramData\containerd".to_owned())
    );
}

#[test]
fn the_commit_container_has_the_commit_charge_and_what_is_left() {
    let commit = CommitMemory {
        limit_bytes: 10_000,
        total_bytes: 3_000,
    };
    let container = commit_memory(commit, cri_time(NOW, 0));
    assert_eq!(container.name, GLOBAL_COMMIT_MEMORY);
    assert_eq!(container.cpu, None);
    let memory = container.memory.expect("memory");
    assert_eq!(memory.usage_bytes, Some(3_000));
    assert_eq!(memory.available_bytes, Some(7_000));
    let over = CommitMemory {
        limit_bytes: 1,
        total_bytes: 2,
    };
    assert_eq!(over.available_bytes(), 0);
}

#[test]
fn the_pods_container_sums_the_pods_and_leaves_out_zero_sums() {
    let pod = |cores, working_set| PodStats {
        cpu: Some(CpuStats {
            time: cri_time(NOW, 0),
            usage_nano_cores: Some(cores),
            usage_core_nano_seconds: None,
        }),
        memory: Some(MemoryStats {
            time: cri_time(NOW, 0),
            available_bytes: None,
            usage_bytes: Some(working_set * 2),
            working_set_bytes: Some(working_set),
            rss_bytes: None,
            page_faults: None,
            major_page_faults: None,
        }),
        pod_ref: PodReference::default(),
        start_time: cri_time(NOW, 0),
        containers: Vec::new(),
        network: None,
        ephemeral_storage: None,
        volume: None,
    };
    let container = pods(&[pod(5, 100), pod(7, 50)], cri_time(NOW, 0));
    assert_eq!(container.name, PODS);
    let cpu = container.cpu.expect("cpu");
    assert_eq!(cpu.usage_nano_cores, Some(12));
    assert_eq!(cpu.usage_core_nano_seconds, None, "no pod has it");
    let memory = container.memory.expect("memory");
    assert_eq!(memory.working_set_bytes, Some(150));
    assert_eq!(memory.usage_bytes, Some(300));
    assert_eq!(memory.available_bytes, None);
    let idle = pods(&[pod(0, 0)], cri_time(NOW, 0));
    assert_eq!(
        idle.cpu.and_then(|c| c.usage_nano_cores),
        None,
        "a zero sum"
    );
}
