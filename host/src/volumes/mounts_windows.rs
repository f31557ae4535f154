//! The mounts a pod's volumes make on Windows: none. There is no tmpfs, so a memory-backed
//! emptyDir is refused with that reason, and teardown finds nothing mounted.

use std::path::Path;

use super::error::VolumeFileError;
use crate::mountinfo::{MountEntry, MountTableError};

/// No pod volume is ever a mount on Windows.
///
/// # Errors
///
/// Never.
pub(super) fn node_mounts() -> Result<Vec<MountEntry>, MountTableError> {
    Ok(Vec::new())
}

/// Refuses: Windows has no tmpfs for an emptyDir with `medium: Memory`.
///
/// # Errors
///
/// Always: [`VolumeFileError::NoTmpfs`].
pub(super) fn mount_tmpfs(_path: &Path, _options: &str) -> Result<(), VolumeFileError> {
    Err(VolumeFileError::NoTmpfs)
}

/// Nothing to unmount.
///
/// # Errors
///
/// Never.
pub(super) fn unmount(_path: &Path) -> Result<(), VolumeFileError> {
    Ok(())
}
