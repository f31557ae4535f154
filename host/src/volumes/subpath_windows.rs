//! subPath mounts on a Windows node: not made yet. Windows has no bind mounts; upstream links
//! the resolved path into the container's mount instead, which is still to be written here, so
//! a container with a subPath is refused with that reason rather than started without it.

use std::path::Path;

use sergeant_core::volumes::{SubPathError, SubPathMount, SubPathReason};

use super::error::VolumeFileError;

/// Refuses the first subPath mount of the container (there is nothing to do without one).
///
/// # Errors
///
/// The first mount, refused: subPaths are not supported on Windows nodes yet.
pub fn prepare_sub_paths(mounts: &[SubPathMount]) -> Result<(), SubPathError> {
    match mounts.first() {
        None => Ok(()),
        Some(mount) => Err(mount.refused(SubPathReason::Node(
            "subPath volume mounts are not supported on Windows nodes yet".to_owned(),
        ))),
    }
}

/// Nothing to clear: no subPath mount point is ever made on Windows.
///
/// # Errors
///
/// Never.
pub(crate) fn clear_pod_mount_points(_pod_dir: &Path) -> Result<(), VolumeFileError> {
    Ok(())
}
