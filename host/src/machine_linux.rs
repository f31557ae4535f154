//! The machine facts on Linux, from files every Linux machine has: `/etc/machine-id`, the DMI
//! product UUID, the boot id and kernel release under `/proc/sys/kernel`, the os-release
//! `PRETTY_NAME`, the memory size from `/proc/meminfo` and the logical CPUs online from
//! `/sys/devices/system/cpu/online`.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use sergeant_core::spec::{io_reason, NodeOs, SpecError};

use super::{Identity, MachineError};
use crate::cpu_list;

const MACHINE_ID: [&str; 2] = ["/etc/machine-id", "/var/lib/dbus/machine-id"];
const SYSTEM_UUID: &str = "/sys/class/dmi/id/product_uuid";
const BOOT_ID: &str = "/proc/sys/kernel/random/boot_id";
const KERNEL_RELEASE: &str = "/proc/sys/kernel/osrelease";
const OS_RELEASE: [&str; 2] = ["/etc/os-release", "/usr/lib/os-release"];
/// What `osImage` says when no os-release file names the system.
const UNKNOWN_OS: &str = "Linux";
/// Where Linux says how much memory the node has.
const MEMINFO: &str = "/proc/meminfo";
/// Where Linux lists the CPUs it has online: the whole machine's, whatever the affinity and
/// cgroup quota of the process reading it.
const ONLINE_CPUS: &str = "/sys/devices/system/cpu/online";

/// Who this machine is and what it runs.
pub(super) fn identity() -> Result<Identity, MachineError> {
    Ok(Identity {
        os: NodeOs::Linux,
        os_labels: BTreeMap::new(),
        machine_id: first_readable(&MACHINE_ID).unwrap_or_default(),
        system_uuid: first_readable(&[SYSTEM_UUID]).unwrap_or_default(),
        boot_id: read_trimmed(Path::new(BOOT_ID))?,
        kernel_version: read_trimmed(Path::new(KERNEL_RELEASE))?,
        os_image: first_readable(&OS_RELEASE)
            .and_then(|text| pretty_name(&text))
            .unwrap_or_else(|| UNKNOWN_OS.to_owned()),
    })
}

/// The node's memory size, `MemTotal` of `/proc/meminfo`, in bytes.
///
/// # Errors
///
/// [`SpecError::Node`] when the file cannot be read or has no usable `MemTotal` line.
pub fn memory_capacity() -> Result<u64, SpecError> {
    let meminfo = Path::new(MEMINFO);
    let text = std::fs::read_to_string(meminfo).map_err(|e| SpecError::Node {
        reason: format!("{}: {}", meminfo.display(), io_reason(&e)),
    })?;
    parse_mem_total(&text).ok_or_else(|| SpecError::Node {
        reason: format!("{}: no MemTotal line in kB", meminfo.display()),
    })
}

/// The machine's logical CPUs online, counted from `/sys/devices/system/cpu/online`: what
/// the Node's cpu capacity is, not the CPUs this process may run on.
///
/// # Errors
///
/// [`MachineError::Read`] when the file cannot be read, [`MachineError::CpuList`] when it
/// does not hold a list of CPUs.
pub fn logical_cpus() -> Result<u32, MachineError> {
    cpus_listed_in(Path::new(ONLINE_CPUS))
}

/// How many CPUs the list in the file at `path` names, reading no more of it than a list can
/// be long.
fn cpus_listed_in(path: &Path) -> Result<u32, MachineError> {
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|file| {
            // One byte past the longest list, so that a longer file is refused, not cut.
            let limit = u64::try_from(cpu_list::MAX_LEN).map_or(u64::MAX, |max| max + 1);
            file.take(limit).read_to_string(&mut text)
        })
        .map_err(|reason| MachineError::Read {
            path: path.to_owned(),
            reason,
        })?;
    cpu_list::count(&text).map_err(|reason| MachineError::CpuList {
        path: path.to_owned(),
        text,
        reason,
    })
}

fn parse_mem_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line.split_whitespace().skip(1);
    let kib: u64 = words.next()?.parse().ok()?;
    (words.next() == Some("kB")).then_some(kib.checked_mul(1024)?)
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
    fn mem_total_is_read_in_bytes() {
        let text = "MemTotal:       24683568 kB\nMemFree:  1 kB\n";
        assert_eq!(parse_mem_total(text), Some(24_683_568 * 1024));
        assert_eq!(parse_mem_total("MemFree: 1 kB\n"), None);
        assert_eq!(parse_mem_total("MemTotal: x kB\n"), None);
        assert!(memory_capacity().expect("this machine's meminfo") > 0);
    }

    #[test]
    fn the_online_cpus_are_counted() {
        assert!(logical_cpus().expect("this machine's online CPUs") >= 1);
        let dir = tempfile::tempdir().unwrap();
        let online = dir.path().join("online");
        std::fs::write(&online, "0-3,6,8-11\n").unwrap();
        assert_eq!(cpus_listed_in(&online).unwrap(), 9);
    }

    #[test]
    fn a_file_that_is_no_cpu_list_is_refused_naming_the_file_and_its_text() {
        let dir = tempfile::tempdir().unwrap();
        let online = dir.path().join("online");
        std::fs::write(&online, "0-3,x\n").unwrap();
        let err = cpus_listed_in(&online).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}: \"0-3,x\\n\" is not a list of CPUs: \"x\" is not a CPU number or a range \
                 `first-last`",
                online.display()
            )
        );
        std::fs::write(&online, "0,".repeat(cpu_list::MAX_LEN)).unwrap();
        let err = cpus_listed_in(&online).unwrap_err();
        assert!(
            matches!(
                &err,
                MachineError::CpuList { text, reason: cpu_list::CpuListError::TooLong, .. }
                    if text.len() == cpu_list::MAX_LEN + 1
            ),
            "{err:?}"
        );
        let missing = dir.path().join("missing");
        assert!(matches!(
            cpus_listed_in(&missing),
            Err(MachineError::Read { path, .. }) if path == missing
        ));
    }

    #[test]
    fn a_linux_boot_id_is_a_uuid() {
        let identity = identity().unwrap();
        assert_eq!(identity.boot_id.len(), 36, "{identity:?}");
        assert!(identity.os_labels.is_empty());
    }
}
