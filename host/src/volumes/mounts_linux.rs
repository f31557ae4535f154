//! The mounts a pod's volumes make on Linux: a tmpfs for a memory-backed emptyDir, read back
//! from `/proc/self/mountinfo` and unmounted at teardown.

use std::path::Path;

use nix::errno::Errno;
use nix::mount::{mount, umount2, MntFlags, MsFlags};

use crate::mountinfo::{self, MountEntry};

/// The node's mounts.
///
/// # Errors
///
/// Why `/proc/self/mountinfo` could not be read.
pub(super) fn node_mounts() -> Result<Vec<MountEntry>, String> {
    mountinfo::mounts()
}

/// Mounts a tmpfs with `options` (`size=…`, or none) on `path`, without setuid or devices.
///
/// # Errors
///
/// The reason the kernel gave.
pub(super) fn mount_tmpfs(path: &Path, options: &str) -> Result<(), String> {
    mount(
        Some("tmpfs"),
        path,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some(options),
    )
    .map_err(|errno| format!("mounting a tmpfs ({options}): {}", errno.desc()))
}

/// Unmounts `path`; a path that is no longer mounted or no longer there is fine.
///
/// # Errors
///
/// The reason the kernel gave otherwise.
pub(super) fn unmount(path: &Path) -> Result<(), String> {
    match umount2(path, MntFlags::empty()) {
        Ok(()) | Err(Errno::EINVAL | Errno::ENOENT) => Ok(()),
        Err(errno) => Err(format!("unmounting: {}", errno.desc())),
    }
}
