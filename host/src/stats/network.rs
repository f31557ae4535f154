//! The network stats of one network namespace, from its `net/dev` and `net/route` under procfs
//! (`/proc/net` for the node's, `/proc/<pid>/net` for a pod's). Blocking.

use std::path::Path;

use super::clock::Clock;
use super::error::HostStatsError;
use super::procfs::{self, Interface};
use sergeant_core::stats::summary::{InterfaceStats, NetworkStats};

/// Interfaces left out: loopback, and the host ends of container links and bridges, which
/// repeat the pods' own traffic (the ones cAdvisor leaves out for the upstream kubelet).
const IGNORED_PREFIXES: [&str; 4] = ["lo", "veth", "docker", "nerdctl"];

/// The interface upstream reports at top level when there is no default route.
const FALLBACK_DEFAULT: &str = "eth0";

/// The stats of the namespace whose procfs `net` directory is `net_dir`.
///
/// # Errors
/// [`HostStatsError`] when `net_dir/dev` cannot be read or parsed.
pub fn namespace(net_dir: &Path, clock: Clock) -> Result<NetworkStats, HostStatsError> {
    let interfaces: Vec<InterfaceStats> = procfs::read(&net_dir.join("dev"), procfs::net_dev)?
        .into_iter()
        .filter(|i| !IGNORED_PREFIXES.iter().any(|p| i.name.starts_with(p)))
        .map(stats)
        .collect();
    let default_name = std::fs::read_to_string(net_dir.join("route"))
        .ok()
        .and_then(|text| procfs::default_route_interface(&text))
        .unwrap_or_else(|| FALLBACK_DEFAULT.to_string());
    let default = interfaces
        .iter()
        .find(|i| i.name == default_name)
        .cloned()
        .unwrap_or_default();
    Ok(NetworkStats {
        time: clock.time(),
        default,
        interfaces,
    })
}

fn stats(interface: Interface) -> InterfaceStats {
    InterfaceStats {
        name: interface.name,
        rx_bytes: Some(interface.rx_bytes),
        rx_errors: Some(interface.rx_errors),
        tx_bytes: Some(interface.tx_bytes),
        tx_errors: Some(interface.tx_errors),
    }
}
