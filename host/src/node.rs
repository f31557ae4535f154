//! Node facts measured on the host: the memory size from `/proc/meminfo`, the node's address
//! when none is configured, and the [`NodeContext`] every pod translation is made with.

use std::path::Path;

use sergeant_config::NodeConfig;
use sergeant_core::spec::{io_reason, NodeContext, SpecError};

use crate::address::default_route_address;
use crate::apparmor::apparmor_enabled;

/// Where Linux says how much memory the node has.
const MEMINFO: &str = "/proc/meminfo";

/// The node settings of `config` with the memory this machine has, and the node's address:
/// `--node-ip` when given, else the default route's ([`default_route_address`]), the address the
/// Node reports as `InternalIP` and pods get as `status.hostIP`; and whether the kernel enforces
/// AppArmor ([`apparmor_enabled`]). Blocking I/O.
///
/// # Errors
///
/// What [`NodeContext::from_config`] refuses, or the memory size cannot be read.
pub fn node_context(config: &NodeConfig) -> Result<NodeContext, SpecError> {
    let mut node = NodeContext::from_config(config, memory_capacity()?)?;
    node.node_ip = node.node_ip.or_else(default_route_address);
    node.apparmor_enabled = apparmor_enabled();
    Ok(node)
}

/// The node's memory size, `MemTotal` of `/proc/meminfo`, in bytes.
///
/// # Errors
///
/// [`SpecError::Node`] when the file cannot be read or has no usable `MemTotal` line.
pub fn memory_capacity() -> Result<u64, SpecError> {
    memory_capacity_in(Path::new(MEMINFO))
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

/// `MemTotal` of a meminfo file, in bytes.
fn memory_capacity_in(meminfo: &Path) -> Result<u64, SpecError> {
    let text = std::fs::read_to_string(meminfo).map_err(|e| SpecError::Node {
        reason: format!("{}: {}", meminfo.display(), io_reason(&e)),
    })?;
    parse_mem_total(&text).ok_or_else(|| SpecError::Node {
        reason: format!("{}: no MemTotal line in kB", meminfo.display()),
    })
}

fn parse_mem_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line.split_whitespace().skip(1);
    let kib: u64 = words.next()?.parse().ok()?;
    (words.next() == Some("kB")).then_some(kib.checked_mul(1024)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_total_is_read_in_bytes() {
        let text = "MemTotal:       24683568 kB\nMemFree:  1 kB\n";
        assert_eq!(parse_mem_total(text), Some(24_683_568 * 1024));
        assert_eq!(parse_mem_total("MemFree: 1 kB\n"), None);
        assert_eq!(parse_mem_total("MemTotal: x kB\n"), None);
        assert!(memory_capacity().expect("this machine's meminfo") > 0);
    }
}
