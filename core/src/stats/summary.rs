//! The Summary API's types (`stats/v1alpha1` of the upstream kubelet), with its JSON names, so
//! metrics-server, Prometheus adapters and `kubectl top` read sergeant's `/stats/summary` as
//! they read the upstream kubelet's. Optional values are omitted when unknown, as upstream.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde::{Deserialize, Serialize};

/// The whole `/stats/summary` answer: the node and its pods.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// The node's own usage.
    pub node: NodeStats,
    /// One entry per pod running on the node.
    pub pods: Vec<PodStats>,
}

/// The node's usage, read from the kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeStats {
    /// The node's name.
    pub node_name: String,
    /// When the node booted.
    pub start_time: Time,
    /// CPU of the whole node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuStats>,
    /// Memory of the whole node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryStats>,
    /// The node's network interfaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkStats>,
    /// The filesystem of the kubelet's root directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs: Option<FsStats>,
    /// The container runtime's filesystems.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<RuntimeStats>,
    /// Process limits of the node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rlimit: Option<RlimitStats>,
    /// The node's system containers: `pods`, the cgroup every pod runs under, when it exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_containers: Option<Vec<ContainerStats>>,
}

/// The runtime's filesystems.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeStats {
    /// Where the runtime stores images (and, when it has no separate one, writable layers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_fs: Option<FsStats>,
}

/// The node's process count and its limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RlimitStats {
    /// When this was read.
    pub time: Time,
    /// The largest process id (`/proc/sys/kernel/pid_max`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maxpid: Option<i64>,
    /// How many processes (threads) exist now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curproc: Option<i64>,
}

/// CPU usage at one instant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CpuStats {
    /// When the sample was taken.
    pub time: Time,
    /// The rate of use, in billionths of a core, over the last sampling interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_nano_cores: Option<u64>,
    /// CPU time used since the start, in core-nanoseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_core_nano_seconds: Option<u64>,
}

/// Memory usage at one instant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryStats {
    /// When the sample was taken.
    pub time: Time,
    /// Memory left before the limit (the node's capacity for the node): limit − working set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_bytes: Option<u64>,
    /// All memory in use, caches included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_bytes: Option<u64>,
    /// Memory that cannot be reclaimed under pressure: usage − inactive file pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_set_bytes: Option<u64>,
    /// Anonymous memory and swap cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_bytes: Option<u64>,
    /// Page faults since the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_faults: Option<u64>,
    /// Major page faults since the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub major_page_faults: Option<u64>,
}

/// Traffic of the interfaces of one network namespace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkStats {
    /// When the sample was taken.
    pub time: Time,
    /// The default interface (the one of the default route), inline as upstream has it.
    #[serde(flatten)]
    pub default: InterfaceStats,
    /// Every interface but loopback and the host ends of pod links.
    #[serde(default)]
    pub interfaces: Vec<InterfaceStats>,
}

/// Traffic of one interface since it came up.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InterfaceStats {
    /// The interface's name.
    #[serde(default)]
    pub name: String,
    /// Bytes received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_bytes: Option<u64>,
    /// Receive errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_errors: Option<u64>,
    /// Bytes sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_bytes: Option<u64>,
    /// Send errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_errors: Option<u64>,
}

/// A filesystem's size and use, or the part of it one consumer uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FsStats {
    /// When the sample was taken.
    pub time: Time,
    /// Bytes free for unprivileged users.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_bytes: Option<u64>,
    /// The filesystem's size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_bytes: Option<u64>,
    /// Bytes used (by the consumer, when the stats are a consumer's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_bytes: Option<u64>,
    /// Free inodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inodes_free: Option<u64>,
    /// All inodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inodes: Option<u64>,
    /// Inodes used (by the consumer, when the stats are a consumer's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inodes_used: Option<u64>,
}

/// One pod's usage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodStats {
    /// Which pod.
    pub pod_ref: PodReference,
    /// When the pod started (its status's `startTime`, else its sandbox's creation).
    pub start_time: Time,
    /// Its running containers.
    #[serde(default)]
    pub containers: Vec<ContainerStats>,
    /// The sum of its containers' CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuStats>,
    /// The sum of its containers' memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryStats>,
    /// The traffic of its network namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkStats>,
    /// Its local disk use: writable layers and logs, on the node's filesystem.
    #[serde(
        rename = "ephemeral-storage",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub ephemeral_storage: Option<FsStats>,
    /// Its volumes that live in the pod's directory (emptyDir, configMap, secret,
    /// downwardAPI, projected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<Vec<VolumeStats>>,
}

/// One volume's use of the filesystem it lives on, so `kubectl top` and eviction tooling can
/// see which volume fills a disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VolumeStats {
    /// The filesystem's size, and what the volume uses of it.
    #[serde(flatten)]
    pub fs: FsStats,
    /// The volume's name in the pod spec.
    pub name: String,
}

/// Names a pod.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodReference {
    /// The pod's name.
    pub name: String,
    /// The pod's namespace.
    pub namespace: String,
    /// The pod's UID.
    pub uid: String,
}

/// One container's usage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStats {
    /// The container's name in its pod.
    pub name: String,
    /// When the container was created.
    pub start_time: Time,
    /// Its CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuStats>,
    /// Its memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryStats>,
    /// Its writable layer, on the runtime's filesystem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rootfs: Option<FsStats>,
    /// Its log files, on the logs' filesystem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logs: Option<FsStats>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A summary as the upstream kubelet writes it (trimmed), field names and all.
    const UPSTREAM: &str = r#"{
      "node": {
        "nodeName": "n1", "startTime": "2024-05-01T10:00:00Z",
        "systemContainers": [{"name": "pods", "startTime": "2024-05-01T10:00:05Z",
                              "memory": {"time": "2024-05-01T12:00:00Z", "workingSetBytes": 17}}],
        "cpu": {"time": "2024-05-01T12:00:00Z", "usageNanoCores": 12345, "usageCoreNanoSeconds": 999},
        "memory": {"time": "2024-05-01T12:00:00Z", "availableBytes": 1, "usageBytes": 2,
                   "workingSetBytes": 3, "rssBytes": 4, "pageFaults": 5, "majorPageFaults": 6},
        "network": {"time": "2024-05-01T12:00:00Z", "name": "eth0", "rxBytes": 7, "rxErrors": 0,
                    "txBytes": 8, "txErrors": 0, "interfaces": [{"name": "eth0", "rxBytes": 7}]},
        "fs": {"time": "2024-05-01T12:00:00Z", "availableBytes": 9, "capacityBytes": 10,
               "usedBytes": 1, "inodesFree": 11, "inodes": 12, "inodesUsed": 1},
        "runtime": {"imageFs": {"time": "2024-05-01T12:00:00Z", "usedBytes": 13}},
        "rlimit": {"time": "2024-05-01T12:00:00Z", "maxpid": 4194304, "curproc": 321}
      },
      "pods": [{
        "podRef": {"name": "web", "namespace": "default", "uid": "u-1"},
        "startTime": "2024-05-01T11:00:00Z",
        "containers": [{"name": "app", "startTime": "2024-05-01T11:00:01Z",
                        "cpu": {"time": "2024-05-01T12:00:00Z", "usageNanoCores": 5},
                        "logs": {"time": "2024-05-01T12:00:00Z", "usedBytes": 14}}],
        "ephemeral-storage": {"time": "2024-05-01T12:00:00Z", "usedBytes": 15},
        "volume": [{"time": "2024-05-01T12:00:00Z", "capacityBytes": 16, "usedBytes": 4,
                    "name": "data"}]
      }]
    }"#;

    #[test]
    fn an_upstream_summary_reads_and_writes_back_with_the_same_names() {
        let summary: Summary = serde_json::from_str(UPSTREAM).unwrap();
        assert_eq!(summary.node.network.as_ref().unwrap().default.name, "eth0");
        assert_eq!(
            summary.node.rlimit.as_ref().unwrap().maxpid,
            Some(4_194_304)
        );
        let system = summary.node.system_containers.as_ref().unwrap();
        assert_eq!(system[0].name, "pods");
        let pod = &summary.pods[0];
        assert_eq!(pod.pod_ref.uid, "u-1");
        assert_eq!(pod.ephemeral_storage.as_ref().unwrap().used_bytes, Some(15));
        assert_eq!(pod.volume.as_ref().unwrap()[0].name, "data");
        assert_eq!(pod.volume.as_ref().unwrap()[0].fs.used_bytes, Some(4));
        let written = serde_json::to_value(&summary).unwrap();
        let original: serde_json::Value = serde_json::from_str(UPSTREAM).unwrap();
        assert_eq!(written, original);
    }
}
