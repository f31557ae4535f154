//! The mounts a pod's volumes make on Windows: none. There is no tmpfs, so a memory-backed
//! emptyDir is refused with that reason, and teardown finds nothing mounted.

use std::path::Path;

use crate::mountinfo::MountEntry;

/// No pod volume is ever a mount on Windows.
///
/// # Errors
///
/// Never.
pub(super) fn node_mounts() -> Result<Vec<MountEntry>, String> {
    Ok(Vec::new())
}

/// Refuses: Windows has no tmpfs for an emptyDir with `medium: Memory`.
///
/// # Errors
///
/// Always, with that reason.
pub(super) fn mount_tmpfs(_path: &Path, _options: &str) -> Result<(), String> {
    Err("emptyDir medium Memory needs a tmpfs, which Windows nodes do not have".to_owned())
}

/// Nothing to unmount.
///
/// # Errors
///
/// Never.
pub(super) fn unmount(_path: &Path) -> Result<(), String> {
    Ok(())
}
