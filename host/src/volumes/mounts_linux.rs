//! The mounts a pod's volumes make on Linux: a tmpfs for a memory-backed emptyDir, read back
//! from `/proc/self/mountinfo` and unmounted at teardown.

use std::path::Path;

use nix::errno::Errno;
use nix::mount::{mount, umount2, MntFlags, MsFlags};

use super::error::VolumeFileError;
use crate::mountinfo::{self, MountEntry, MountTableError};

/// The node's mounts.
///
/// # Errors
///
/// Why `/proc/self/mountinfo` could not be read.
pub(super) fn node_mounts() -> Result<Vec<MountEntry>, MountTableError> {
    mountinfo::mounts()
}

/// Mounts a tmpfs with `options` (`size=…`, or none) on `path`, without setuid or devices.
///
/// # Errors
///
/// [`VolumeFileError::MountTmpfs`] with the reason the kernel gave.
pub(super) fn mount_tmpfs(path: &Path, options: &str) -> Result<(), VolumeFileError> {
    mount(
        Some("tmpfs"),
        path,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some(options),
    )
    .map_err(|errno| VolumeFileError::MountTmpfs {
        path: path.to_path_buf(),
        options: options.to_owned(),
        errno,
    })
}

/// Unmounts `path`; a path that is no longer mounted or no longer there is fine.
///
/// # Errors
///
/// [`VolumeFileError::Unmount`] with the reason the kernel gave otherwise.
pub(super) fn unmount(path: &Path) -> Result<(), VolumeFileError> {
    match umount2(path, MntFlags::empty()) {
        Ok(()) | Err(Errno::EINVAL | Errno::ENOENT) => Ok(()),
        Err(errno) => Err(VolumeFileError::Unmount {
            path: path.to_path_buf(),
            errno,
        }),
    }
}
