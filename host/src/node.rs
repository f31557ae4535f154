//! Node facts measured on the host: the memory size ([`memory_capacity`]) and logical CPUs
//! ([`logical_cpus`]), the node's address when none is configured, and the [`NodeContext`]
//! every pod translation is made with.
//!
//! Entry point: [`node_context`].

use sergeant_config::NodeConfig;
use sergeant_core::spec::{io_reason, NodeContext, SpecError};

use crate::address::default_route_address;
use crate::apparmor::apparmor_enabled;
use crate::machine::{logical_cpus, memory_capacity};

/// The node settings of `config` with the memory and logical CPUs this machine has (the
/// machine's, not what this process may use), and the node's address:
/// `--node-ip` when given, else the default route's ([`default_route_address`]), the address the
/// Node reports as `InternalIP` and pods get as `status.hostIP`; and whether the kernel enforces
/// AppArmor ([`apparmor_enabled`]). Blocking I/O.
///
/// # Errors
///
/// What [`NodeContext::from_config`] refuses, or the memory size or the CPUs cannot be read.
pub fn node_context(config: &NodeConfig) -> Result<NodeContext, SpecError> {
    let cpus = logical_cpus().map_err(|err| SpecError::Node {
        reason: err.to_string(),
    })?;
    let mut node = NodeContext::from_config(config, memory_capacity()?, cpus)?;
    node.node_ip = node.node_ip.or_else(default_route_address);
    node.apparmor_enabled = apparmor_enabled();
    Ok(node)
}

/// The node's process capacity: `/proc/sys/kernel/pid_max`, what upstream counts as the
/// `pid` capacity that `kubeReserved.pid` and `systemReserved.pid` are taken from.
///
/// # Errors
///
/// [`SpecError::Node`] when the file cannot be read or holds no number.
pub fn pid_max() -> Result<i64, SpecError> {
    const PID_MAX: &str = "/proc/sys/kernel/pid_max";
    let text = std::fs::read_to_string(PID_MAX).map_err(|e| SpecError::Node {
        reason: format!("{PID_MAX}: {}", io_reason(&e)),
    })?;
    text.trim().parse().map_err(|_| SpecError::Node {
        reason: format!("{PID_MAX}: {:?} is not a number", text.trim()),
    })
}
