//! The measured facts the Node object is built from: the machine's ([`MachineFacts`], read by
//! `sergeant_host::machine` once at start) and the runtime's health ([`RuntimeHealth`], polled
//! by the runtime adapter and published on a watch feed).

use std::collections::BTreeMap;
use std::net::IpAddr;

use crate::allocatable::NodeResources;
use crate::context::NodeOs;

/// Everything about this machine node status reports that does not change while it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineFacts {
    /// The node's name, also its `kubernetes.io/hostname` label and `Hostname` address.
    pub node_name: String,
    /// `--node-ip`, else the address of the default route's interface.
    pub internal_ip: Option<IpAddr>,
    /// The operating system: the `kubernetes.io/os` label and `nodeInfo.operatingSystem`.
    pub os: NodeOs,
    /// Labels only this operating system sets, as upstream's: on Windows
    /// `node.kubernetes.io/windows-build`, which schedulers match container images against.
    pub os_labels: BTreeMap<String, String>,
    /// `/etc/machine-id` on Linux, the host name on Windows (as upstream reports it there).
    pub machine_id: String,
    /// The DMI product UUID, or Windows' hardware configuration id (empty when the machine has
    /// none or it cannot be read).
    pub system_uuid: String,
    /// Changes with every boot; tells the control plane the node rebooted.
    pub boot_id: String,
    /// The kernel release (`uname -r`), or Windows' `major.minor.build.revision`.
    pub kernel_version: String,
    /// The os-release `PRETTY_NAME`, or Windows' product name.
    pub os_image: String,
    /// CPUs, memory, ephemeral storage and pods.
    pub capacity: NodeResources,
}

/// What the rest of the agent needs to know about the runtime behind the port: which adapter
/// serves it, whether it answers, and its `RuntimeReady` / `NetworkReady` conditions (node
/// status turns these into the node's Ready condition, [`super::conditions`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RuntimeHealth {
    /// The adapter kind serving the port (`cri`, `fake`).
    pub adapter: String,
    /// The endpoint it talks to.
    pub endpoint: String,
    /// Whether the last status call was answered.
    pub reachable: bool,
    /// The runtime's `RuntimeReady` condition.
    pub runtime_ready: bool,
    /// The runtime's `NetworkReady` condition.
    pub network_ready: bool,
    /// The runtime's name and version from the handshake (`containerd 1.6.20`).
    pub runtime_version: String,
    /// Whether the runtime applies a pod's `supplementalGroupsPolicy: Strict` (its CRI
    /// `RuntimeFeatures`); `None` when it reports no features at all (containerd before 2.0),
    /// which upstream takes as not supported and leaves out of the Node's `status.features`.
    pub supplemental_groups_policy: Option<bool>,
    /// Why the runtime is not ready, when it is not.
    pub message: String,
}
