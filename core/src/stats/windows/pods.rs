//! The Windows half of CRI's pod sandbox stats in the summary's types, as upstream's CRI stats
//! provider reads it on Windows: the pod's CPU (cumulative and rate, as the runtime gives
//! them), its memory (working set, available, page faults, and the commit charge as the
//! usage), its network interfaces (received and sent bytes), and each container's stats in
//! the shape `ListContainerStats` answers, so the summary reads them as any runtime's.
//!
//! Entry point: [`by_sandbox`].

use std::collections::HashMap;

use k8s_cri::v1 as cri;

use super::cri_time;
use crate::stats::summary::{CpuStats, InterfaceStats, MemoryStats, NetworkStats};

/// What a Windows runtime says of one pod: the pod's own numbers, and its containers'.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PodUsage {
    /// The pod's CPU, when the runtime gave it.
    pub cpu: Option<CpuStats>,
    /// The pod's memory, when the runtime gave it.
    pub memory: Option<MemoryStats>,
    /// The pod's network, when the runtime gave it.
    pub network: Option<NetworkStats>,
    /// Its containers' usage, as `ListContainerStats` entries.
    pub containers: Vec<cri::ContainerStats>,
}

/// The Windows halves of `stats`, by sandbox id; a sandbox without attributes or without a
/// Windows half (a Linux pod) is left out. `now_ns` stands for a timestamp the runtime left
/// out.
#[must_use]
pub fn by_sandbox(stats: &[cri::PodSandboxStats], now_ns: i64) -> HashMap<String, PodUsage> {
    stats
        .iter()
        .filter_map(|sandbox| {
            let id = sandbox.attributes.as_ref()?.id.clone();
            Some((id, pod(sandbox.windows.as_ref()?, now_ns)))
        })
        .collect()
}

/// One pod's Windows stats in the summary's types.
#[must_use]
pub fn pod(stats: &cri::WindowsPodSandboxStats, now_ns: i64) -> PodUsage {
    PodUsage {
        cpu: stats.cpu.map(|cpu| CpuStats {
            time: cri_time(cpu.timestamp, now_ns),
            usage_nano_cores: value(cpu.usage_nano_cores),
            usage_core_nano_seconds: value(cpu.usage_core_nano_seconds),
        }),
        memory: stats.memory.map(|memory| MemoryStats {
            time: cri_time(memory.timestamp, now_ns),
            available_bytes: value(memory.available_bytes),
            usage_bytes: value(memory.commit_memory_bytes),
            working_set_bytes: value(memory.working_set_bytes),
            rss_bytes: None,
            page_faults: value(memory.page_faults),
            major_page_faults: None,
        }),
        network: stats.network.as_ref().map(|network| NetworkStats {
            time: cri_time(network.timestamp, now_ns),
            default: network
                .default_interface
                .as_ref()
                .map(interface)
                .unwrap_or_default(),
            interfaces: network.interfaces.iter().map(interface).collect(),
        }),
        containers: stats.containers.iter().map(container).collect(),
    }
}

/// A Windows container's stats as a `ListContainerStats` entry: the commit charge is its
/// memory usage; Windows has no RSS, no major page faults and no inode counts.
#[must_use]
pub fn container(stats: &cri::WindowsContainerStats) -> cri::ContainerStats {
    cri::ContainerStats {
        attributes: stats.attributes.clone(),
        cpu: stats.cpu.map(|cpu| cri::CpuUsage {
            timestamp: cpu.timestamp,
            usage_core_nano_seconds: cpu.usage_core_nano_seconds,
            usage_nano_cores: cpu.usage_nano_cores,
        }),
        memory: stats.memory.map(|memory| cri::MemoryUsage {
            timestamp: memory.timestamp,
            working_set_bytes: memory.working_set_bytes,
            available_bytes: memory.available_bytes,
            usage_bytes: memory.commit_memory_bytes,
            rss_bytes: None,
            page_faults: memory.page_faults,
            major_page_faults: None,
        }),
        writable_layer: stats
            .writable_layer
            .as_ref()
            .map(|layer| cri::FilesystemUsage {
                timestamp: layer.timestamp,
                fs_id: layer.fs_id.clone(),
                used_bytes: layer.used_bytes,
                inodes_used: None,
            }),
        swap: None,
    }
}

fn value(value: Option<cri::UInt64Value>) -> Option<u64> {
    value.map(|v| v.value)
}

fn interface(usage: &cri::WindowsNetworkInterfaceUsage) -> InterfaceStats {
    InterfaceStats {
        name: usage.name.clone(),
        rx_bytes: value(usage.rx_bytes),
        rx_errors: None,
        tx_bytes: value(usage.tx_bytes),
        tx_errors: None,
    }
}
