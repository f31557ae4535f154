//! The machine facts node status reports, read once when the actor starts: identity (machine
//! id, system UUID, boot id), the kernel version, the OS image and the labels only this
//! operating system sets, the capacity (CPUs, memory, the root dir's filesystem, `maxPods`)
//! and the node's address, as [`MachineFacts`] that `sergeant_core::node_status` builds the
//! Node from. Where the facts live differs by operating system: Linux's files are read in
//! `machine_linux.rs`, Windows' registry and system calls in `machine_windows.rs`. Blocking:
//! the node-status actor runs it on the blocking pool.
//!
//! Entry point: [`read`].

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use sergeant_config::NodeConfig;
use sergeant_core::allocatable::NodeResources;
use sergeant_core::node_status::facts::MachineFacts;
use sergeant_core::spec::{NodeOs, SpecError};

use crate::cpu_list::CpuListError;
use crate::{filesystem, node};

#[cfg(not(windows))]
#[path = "machine_linux.rs"]
mod platform;
#[cfg(windows)]
#[path = "machine_windows.rs"]
mod platform;

pub use platform::{logical_cpus, memory_capacity};

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
    /// The kernel's list of online CPUs is not one.
    #[error("{path}: {text:?} is not a list of CPUs: {reason}")]
    CpuList {
        /// The file.
        path: PathBuf,
        /// What it holds.
        text: String,
        /// What is wrong with it.
        #[source]
        reason: CpuListError,
    },
    /// A registry value every Windows machine has could not be read.
    #[error("registry HKLM\\{key}\\{value}: {reason}")]
    Registry {
        /// The key under `HKEY_LOCAL_MACHINE`.
        key: &'static str,
        /// The value's name.
        value: &'static str,
        /// Why: the system's error, or a value of another type.
        #[source]
        reason: io::Error,
    },
    /// A system call every Windows machine answers failed.
    #[error("{call}: {reason}")]
    SystemCall {
        /// The call.
        call: &'static str,
        /// The system's error.
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

/// Who the machine is and what it runs, as its operating system tells: what
/// `machine_linux.rs` and `machine_windows.rs` each read.
#[derive(Debug)]
struct Identity {
    /// Which operating system.
    os: NodeOs,
    /// Labels only this operating system sets.
    os_labels: BTreeMap<String, String>,
    machine_id: String,
    system_uuid: String,
    boot_id: String,
    kernel_version: String,
    os_image: String,
}

/// Reads the facts of this machine for the node `config` describes.
///
/// # Errors
/// [`MachineError`] when the node settings, the boot id or the kernel version cannot be read,
/// or the root dir's filesystem cannot be measured.
pub fn read(config: &NodeConfig) -> Result<MachineFacts, MachineError> {
    let node = node::node_context(config).map_err(MachineError::Node)?;
    let storage = filesystem_bytes(&node.root_dir)?;
    let identity = platform::identity()?;
    Ok(MachineFacts {
        internal_ip: node.node_ip,
        node_name: node.node_name,
        os: identity.os,
        os_labels: identity.os_labels,
        machine_id: identity.machine_id,
        system_uuid: identity.system_uuid,
        boot_id: identity.boot_id,
        kernel_version: identity.kernel_version,
        os_image: identity.os_image,
        capacity: NodeResources::of_machine(node.cpus, node.memory_capacity_bytes)
            .with_ephemeral_storage(storage)
            .with_pods(config.kubelet.max_pods),
    })
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(facts.os, NodeOs::of_this_build());
        assert!(!facts.boot_id.is_empty(), "{facts:?}");
        assert!(!facts.kernel_version.is_empty());
        assert!(facts.capacity.ephemeral_storage_bytes > 0, "{facts:?}");
        assert!(facts.capacity.memory_bytes > 0);
        assert_eq!(
            facts.capacity.cpu_millis,
            i64::from(logical_cpus().unwrap()) * 1000
        );
        assert_eq!(facts.capacity.pods, 30);
    }
}
