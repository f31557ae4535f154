//! The machine facts node status reports, read once when the actor starts: identity
//! (`/etc/machine-id`, the DMI product UUID, the boot id), the kernel release, the OS image
//! (`PRETTY_NAME` of os-release), the capacity (CPUs, memory, the root dir's filesystem,
//! `maxPods`) and the node's address, as [`MachineFacts`] that `sergeant_core::node_status`
//! builds the Node from. Blocking: the node-status actor runs it on the blocking pool.

use std::io;
use std::path::{Path, PathBuf};

use sergeant_config::NodeConfig;
use sergeant_core::allocatable::NodeResources;
use sergeant_core::node_status::facts::MachineFacts;
use sergeant_core::spec::SpecError;

use crate::{filesystem, node};

const MACHINE_ID: [&str; 2] = ["/etc/machine-id", "/var/lib/dbus/machine-id"];
const SYSTEM_UUID: &str = "/sys/class/dmi/id/product_uuid";
const BOOT_ID: &str = "/proc/sys/kernel/random/boot_id";
const KERNEL_RELEASE: &str = "/proc/sys/kernel/osrelease";
const OS_RELEASE: [&str; 2] = ["/etc/os-release", "/usr/lib/os-release"];
/// What `osImage` says when no os-release file names the system.
const UNKNOWN_OS: &str = "Linux";

/// Why the machine facts could not be read.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    /// The node's settings (name, memory size) could not be read.
    #[error("node settings: {0}")]
    Node(#[source] SpecError),
    /// A file every Linux machine has could not be read.
    #[error("{path}: {reason}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        reason: io::Error,
    },
    /// The root dir's filesystem could not be measured.
    #[error("measuring the filesystem of {path}: {reason}")]
    Statvfs {
        /// The directory measured.
        path: PathBuf,
        /// Why.
        #[source]
        reason: io::Error,
    },
}

/// Reads the facts of this machine for the node `config` describes.
///
/// # Errors
/// [`MachineError`] when the node settings, the boot id or the kernel release cannot be read,
/// or the root dir's filesystem cannot be measured.
pub fn read(config: &NodeConfig) -> Result<MachineFacts, MachineError> {
    let node = node::node_context(config).map_err(MachineError::Node)?;
    let storage = filesystem_bytes(&node.root_dir)?;
    Ok(MachineFacts {
        internal_ip: node.node_ip,
        node_name: node.node_name,
        machine_id: first_readable(&MACHINE_ID).unwrap_or_default(),
        system_uuid: first_readable(&[SYSTEM_UUID]).unwrap_or_default(),
        boot_id: read_trimmed(Path::new(BOOT_ID))?,
        kernel_version: read_trimmed(Path::new(KERNEL_RELEASE))?,
        os_image: first_readable(&OS_RELEASE)
            .and_then(|text| pretty_name(&text))
            .unwrap_or_else(|| UNKNOWN_OS.to_owned()),
        capacity: NodeResources::of_machine(node.memory_capacity_bytes)
            .with_ephemeral_storage(storage)
            .with_pods(config.kubelet.max_pods),
    })
}

fn read_trimmed(path: &Path) -> Result<String, MachineError> {
    std::fs::read_to_string(path)
        .map(|text| text.trim().to_owned())
        .map_err(|reason| MachineError::Read {
            path: path.to_owned(),
            reason,
        })
}

fn first_readable(paths: &[&str]) -> Option<String> {
    paths
        .iter()
        .find_map(|path| read_trimmed(Path::new(path)).ok())
}

/// The size of the filesystem holding `dir` (or its nearest existing ancestor: the root dir
/// may not be made yet), in bytes.
fn filesystem_bytes(dir: &Path) -> Result<u64, MachineError> {
    let existing = dir
        .ancestors()
        .find(|p| p.exists())
        .unwrap_or(Path::new("/"));
    let space = filesystem::space(existing).map_err(|reason| MachineError::Statvfs {
        path: existing.to_owned(),
        reason,
    })?;
    Ok(space.total_bytes)
}

/// The `PRETTY_NAME` of an os-release file, unquoted.
fn pretty_name(os_release: &str) -> Option<String> {
    let value = os_release
        .lines()
        .find_map(|line| line.trim().strip_prefix("PRETTY_NAME="))?;
    let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
    (!value.is_empty()).then(|| value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pretty_name_is_read_unquoted() {
        let text = "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n";
        assert_eq!(
            pretty_name(text).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(
            pretty_name("PRETTY_NAME=Alpine\n").as_deref(),
            Some("Alpine")
        );
        assert_eq!(pretty_name("NAME=x\n"), None);
        assert_eq!(pretty_name("PRETTY_NAME=\"\"\n"), None);
    }

    #[test]
    fn the_facts_of_this_machine_are_read() {
        let flags = sergeant_config::FlagOverrides {
            hostname_override: Some("node-status-unit".to_owned()),
            root_dir: Some(PathBuf::from("/nonexistent/sergeant/root")),
            node_ip: Some("10.1.2.3".parse().unwrap()),
            ..Default::default()
        };
        let text =
            "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 30\n";
        let config = NodeConfig::parse(text, "test", &flags).unwrap();
        let facts = read(&config).unwrap();
        assert_eq!(facts.node_name, "node-status-unit");
        assert_eq!(facts.internal_ip, Some("10.1.2.3".parse().unwrap()));
        assert_eq!(facts.boot_id.len(), 36, "{facts:?}");
        assert!(!facts.kernel_version.is_empty());
        assert!(facts.capacity.ephemeral_storage_bytes > 0, "{facts:?}");
        assert!(facts.capacity.memory_bytes > 0);
        assert_eq!(facts.capacity.pods, 30);
    }
}
