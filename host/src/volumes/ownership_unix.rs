//! Handing a pod's volume to its `fsGroup`, as upstream does when it mounts one: every entry
//! gets the group (its owner stays), files `rw` (`ro` for the read-only API-backed volumes)
//! for the group on top of their mode, directories also `x` and the setgid bit so what the
//! pod creates later inherits the group. Symlinks get the group only. Blocking I/O.

use std::fs::Metadata;
use std::os::unix::fs::{lchown, MetadataExt, PermissionsExt};
use std::path::Path;

use sergeant_core::volumes::VolumeOwnership;

use super::error::VolumeFileError;

const SETGID: u32 = 0o2000;
const GROUP_RW: u32 = 0o660;
/// Read for the group: what an API-backed volume's files get on top of their mode.
pub(crate) const GROUP_READ: u32 = 0o440;
const GROUP_RO: u32 = GROUP_READ;
const GROUP_X: u32 = 0o110;

/// How deep the walk goes: a volume a pod filled with deeper trees keeps those levels as they
/// are (the walk is bounded, the pod controls the depth).
const MAX_DEPTH: usize = 64;

/// Gives `dir` (the volume's root) and, with `recursive`, everything under it to
/// `ownership`'s group; `read_only` volumes get read, the others read and write, for the
/// group. With `fsGroupChangePolicy: OnRootMismatch` a root already right is left alone.
///
/// # Errors
///
/// [`VolumeFileError::Io`] naming the path when an entry cannot be read or changed.
pub(crate) fn apply(
    dir: &Path,
    ownership: VolumeOwnership,
    read_only: bool,
    recursive: bool,
) -> Result<(), VolumeFileError> {
    let mask = if read_only { GROUP_RO } else { GROUP_RW };
    let root = std::fs::symlink_metadata(dir).map_err(VolumeFileError::io(dir))?;
    let root_right = root.gid() == ownership.group
        && root.mode() & (mask | GROUP_X | SETGID) == mask | GROUP_X | SETGID;
    if ownership.on_root_mismatch && root_right {
        return Ok(());
    }
    change(dir, &root, ownership.group, mask)?;
    if recursive {
        walk(dir, ownership.group, mask, 0)?;
    }
    Ok(())
}

fn walk(dir: &Path, group: u32, mask: u32, depth: usize) -> Result<(), VolumeFileError> {
    if depth >= MAX_DEPTH {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir).map_err(VolumeFileError::io(dir))? {
        let entry = entry.map_err(VolumeFileError::io(dir))?;
        let path = entry.path();
        let metadata = std::fs::symlink_metadata(&path).map_err(VolumeFileError::io(&path))?;
        change(&path, &metadata, group, mask)?;
        if metadata.is_dir() {
            walk(&path, group, mask, depth + 1)?;
        }
    }
    Ok(())
}

/// Gives one entry the group and the mode bits, writing only what differs.
fn change(path: &Path, metadata: &Metadata, group: u32, mask: u32) -> Result<(), VolumeFileError> {
    if metadata.gid() != group {
        lchown(path, None, Some(group)).map_err(VolumeFileError::io(path))?;
    }
    if metadata.file_type().is_symlink() {
        return Ok(());
    }
    let wanted = if metadata.is_dir() {
        mask | GROUP_X | SETGID
    } else {
        mask
    };
    let mode = metadata.mode() & 0o7777;
    if mode & wanted != wanted {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode | wanted))
            .map_err(VolumeFileError::io(path))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn mode(path: &Path) -> u32 {
        std::fs::symlink_metadata(path).unwrap().mode() & 0o7777
    }

    fn gid(path: &Path) -> u32 {
        std::fs::symlink_metadata(path).unwrap().gid()
    }

    /// Real ownership changes (the tests run as root).
    #[test]
    fn a_read_only_volume_is_handed_to_the_group_with_read_bits() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/key"), "v").unwrap();
        std::fs::set_permissions(root.join("sub/key"), std::fs::Permissions::from_mode(0o400))
            .unwrap();
        symlink("sub/key", root.join("key")).unwrap();
        let ownership = VolumeOwnership {
            group: 1234,
            on_root_mismatch: false,
        };
        apply(root, ownership, true, true).unwrap();
        assert_eq!(gid(&root.join("sub/key")), 1234);
        assert_eq!(mode(&root.join("sub/key")), 0o440);
        assert_eq!(mode(&root.join("sub")) & (SETGID | 0o550), SETGID | 0o550);
        assert_eq!(gid(&root.join("key")), 1234, "the link itself");
        assert_eq!(gid(root), 1234);
    }

    #[test]
    fn a_writable_root_gets_setgid_and_on_root_mismatch_skips_a_right_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("file"), "v").unwrap();
        let mut ownership = VolumeOwnership {
            group: 4321,
            on_root_mismatch: false,
        };
        apply(root, ownership, false, false).unwrap();
        assert_eq!(gid(root), 4321);
        assert_eq!(mode(root) & (SETGID | 0o770), SETGID | 0o770);
        assert_ne!(gid(&root.join("file")), 4321, "not recursive");
        ownership.on_root_mismatch = true;
        apply(root, ownership, false, true).unwrap();
        assert_ne!(
            gid(&root.join("file")),
            4321,
            "the root was right: nothing walked"
        );
        ownership.on_root_mismatch = false;
        apply(root, ownership, false, true).unwrap();
        assert_eq!(gid(&root.join("file")), 4321);
        assert_eq!(mode(&root.join("file")) & 0o660, 0o660);
    }
}
