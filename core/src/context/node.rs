//! `NodeContext`: the few node facts a pod's translation depends on, read once from the
//! configuration and measured by the host, so the translation itself stays pure.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use sergeant_config::NodeConfig;

use super::error::SpecError;
use super::node_os::NodeOs;

/// The node-wide settings every pod translation needs (paths, DNS, cgroups, memory size).
/// Built once per configuration with [`NodeContext::from_config`] and handed to the pure
/// translation functions, so they read no configuration or host state of their own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeContext {
    /// This node's name (`spec.nodeName` seen from the node, env `fieldRef: spec.nodeName`).
    pub node_name: String,
    /// The node's address: the pods' `status.hostIP` and env `fieldRef: status.hostIP`, the
    /// Node's `InternalIP`. `--node-ip` here; `sergeant_host::node::node_context` fills in the
    /// detected address when that is not given. `None` when the node has none.
    pub node_ip: Option<IpAddr>,
    /// The kubelet state directory; pods live in `root_dir/pods/<uid>`.
    pub root_dir: PathBuf,
    /// Where pod log directories are made (`/var/log/pods`).
    pub pod_log_root: PathBuf,
    /// Cluster DNS servers for `dnsPolicy: ClusterFirst`.
    pub cluster_dns: Vec<IpAddr>,
    /// Cluster domain for the search path of `ClusterFirst` pods.
    pub cluster_domain: Option<String>,
    /// The resolver file `dnsPolicy: Default` pods inherit.
    pub resolv_conf: PathBuf,
    /// The cgroup pods are placed under (`""` means the root of the hierarchy).
    pub cgroup_root: String,
    /// Whether pods go into per-QoS cgroups (`/kubepods/burstable/pod<uid>`).
    pub cgroups_per_qos: bool,
    /// Most processes per pod; zero or less means unlimited.
    pub pod_pids_limit: i64,
    /// The node's memory size, which scales the OOM score of burstable containers.
    pub memory_capacity_bytes: u64,
    /// The machine's logical CPUs online, as the host measured them (not what the agent's own
    /// process may use): the Node's cpu capacity, what a `resourceFieldRef` to `limits.cpu` of
    /// a container without a cpu limit reads and what a Windows cpu limit is a share of.
    pub cpus: u32,
    /// The node's operating system: which half (Linux or Windows) of the CRI configurations
    /// pods get.
    pub os: NodeOs,
    /// `seccompDefault`: whether a container that names no seccomp profile runs under the
    /// runtime's default one rather than unconfined.
    pub seccomp_default: bool,
    /// Whether the host kernel enforces AppArmor: a pod asking for an AppArmor profile is
    /// refused admission on a node without it, as upstream. `sergeant_host::node::node_context`
    /// measures it; [`NodeContext::from_config`] leaves it false.
    pub apparmor_enabled: bool,
}

impl NodeContext {
    /// Takes the settings from the configuration and the machine's size the host measured: its
    /// memory (`sergeant_host::machine::memory_capacity`) and its logical CPUs online
    /// (`sergeant_host::machine::logical_cpus`).
    ///
    /// # Errors
    ///
    /// [`SpecError::Node`] when the node name cannot be determined. (A `systemd` cgroup
    /// driver never gets here: the configuration refuses it.)
    pub fn from_config(
        config: &NodeConfig,
        memory_capacity_bytes: u64,
        cpus: u32,
    ) -> Result<Self, SpecError> {
        let node = |reason: String| SpecError::Node { reason };
        let kubelet = &config.kubelet;
        Ok(NodeContext {
            node_name: config.node_name().map_err(|e| node(e.to_string()))?,
            node_ip: config.command_line.node_ip,
            root_dir: config.command_line.root_dir.clone(),
            pod_log_root: kubelet.pod_logs_dir.clone(),
            cluster_dns: kubelet.cluster_dns.clone(),
            cluster_domain: kubelet.cluster_domain.clone(),
            resolv_conf: kubelet.resolv_conf.clone(),
            cgroup_root: kubelet.cgroup_root.clone().unwrap_or_default(),
            cgroups_per_qos: kubelet.cgroups_per_qos,
            pod_pids_limit: kubelet.pod_pids_limit,
            memory_capacity_bytes,
            cpus,
            os: NodeOs::of_this_build(),
            seccomp_default: kubelet.seccomp_default,
            apparmor_enabled: false,
        })
    }

    /// Whether pods get cgroups here: on Linux; Windows has none (its job objects are the
    /// runtime's), so a Windows node makes and removes no pod cgroup.
    #[must_use]
    pub fn has_cgroups(&self) -> bool {
        self.os == NodeOs::Linux
    }

    /// The node's whole logical processors (at least one): what a Windows cpu limit is a share
    /// of.
    #[must_use]
    pub fn processors(&self) -> u32 {
        self.cpus.max(1)
    }

    /// The node's cpus in millicores.
    #[must_use]
    pub fn cpu_capacity_millis(&self) -> i64 {
        i64::from(self.cpus) * 1000
    }

    /// `root_dir/pods/<uid>`: everything the node keeps for one pod.
    pub fn pod_dir(&self, uid: &str) -> PathBuf {
        pod_dir_in(&self.root_dir, uid)
    }
}

/// `root_dir/pods/<uid>`: the directory of pod `uid` under the kubelet state directory
/// `root_dir`, for readers that have the directory but no [`NodeContext`] (the stats).
pub fn pod_dir_in(root_dir: &Path, uid: &str) -> PathBuf {
    root_dir.join("pods").join(uid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_config_takes_the_settings() {
        let text = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n\
                    clusterDNS: [10.96.0.10]\nclusterDomain: cluster.local\npodPidsLimit: 100\n";
        let flags = sergeant_config::FlagOverrides {
            hostname_override: Some("Node-A".to_string()),
            root_dir: Some(PathBuf::from("/tmp/sergeant-root")),
            ..Default::default()
        };
        let config = NodeConfig::parse(text, "test", &flags).expect("config");
        let node = NodeContext::from_config(&config, 1 << 30, 6).expect("context");
        assert_eq!(node.node_name, "node-a");
        assert_eq!(node.root_dir, PathBuf::from("/tmp/sergeant-root"));
        assert_eq!(
            node.cluster_dns,
            vec!["10.96.0.10".parse::<IpAddr>().unwrap()]
        );
        assert_eq!(node.cluster_domain.as_deref(), Some("cluster.local"));
        assert_eq!(node.pod_pids_limit, 100);
        assert_eq!(node.cgroup_root, "");
        assert!(node.cgroups_per_qos);
        assert_eq!(node.memory_capacity_bytes, 1 << 30);
        assert_eq!((node.cpus, node.cpu_capacity_millis()), (6, 6000));
        assert_eq!(
            node.pod_dir("u1"),
            PathBuf::from("/tmp/sergeant-root/pods/u1")
        );
    }
}
