//! hostPath volumes on the node: checking what is at the path, or creating it, as the
//! volume's type says.

use std::fs::{File, OpenOptions};
use std::path::Path;

use sergeant_core::volumes::HostPathType;

use super::error::VolumeFileError;
use crate::file_mode::{create_file_with_mode, dir_builder, is_special, Special};

/// Checks `path` against the hostPath type `kind`, creating it for the `…OrCreate` types.
///
/// # Errors
///
/// [`VolumeFileError::NotOfType`] when what is there is not what the type asks for,
/// [`VolumeFileError::Volume`] when the path cannot be examined or created.
pub(super) fn prepare_host_path(kind: HostPathType, path: &Path) -> Result<(), VolumeFileError> {
    let io = VolumeFileError::volume(path);
    match kind {
        HostPathType::Unchecked => return Ok(()),
        HostPathType::DirectoryOrCreate if !exists(path)? => {
            return dir_builder(0o755).recursive(true).create(path).map_err(io);
        }
        HostPathType::FileOrCreate if !exists(path)? => {
            return create_file_with_mode(
                OpenOptions::new().write(true).create(true).truncate(false),
                0o644,
            )
            .open(path)
            .map(|_: File| ())
            .map_err(io);
        }
        _ => {}
    }
    let file_type = std::fs::metadata(path).map_err(io)?.file_type();
    let (matches, wanted) = match kind {
        HostPathType::DirectoryOrCreate | HostPathType::Directory => {
            (file_type.is_dir(), "a directory")
        }
        HostPathType::FileOrCreate | HostPathType::File => (file_type.is_file(), "a file"),
        HostPathType::Socket => (is_special(&file_type, Special::Socket), "a socket"),
        HostPathType::CharDevice => (
            is_special(&file_type, Special::CharDevice),
            "a character device",
        ),
        HostPathType::BlockDevice => (
            is_special(&file_type, Special::BlockDevice),
            "a block device",
        ),
        HostPathType::Unchecked => (true, ""),
    };
    if matches {
        Ok(())
    } else {
        Err(VolumeFileError::NotOfType {
            path: path.to_path_buf(),
            wanted,
        })
    }
}

fn exists(path: &Path) -> Result<bool, VolumeFileError> {
    path.try_exists().map_err(VolumeFileError::volume(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a refusal says is wrong, as the message names it.
    fn wanted(kind: HostPathType, path: &Path) -> Option<&'static str> {
        match prepare_host_path(kind, path) {
            Err(VolumeFileError::NotOfType { path: at, wanted }) if at == path => Some(wanted),
            _ => None,
        }
    }

    #[test]
    fn types_are_checked_and_created() {
        let dir = tempfile::tempdir().unwrap();
        let new_dir = dir.path().join("a/b");
        prepare_host_path(HostPathType::DirectoryOrCreate, &new_dir).unwrap();
        assert!(new_dir.is_dir());
        prepare_host_path(HostPathType::Directory, &new_dir).unwrap();
        let new_file = dir.path().join("f");
        prepare_host_path(HostPathType::FileOrCreate, &new_file).unwrap();
        assert!(new_file.is_file());
        prepare_host_path(HostPathType::File, &new_file).unwrap();
        assert_eq!(
            wanted(HostPathType::Directory, &new_file),
            Some("a directory")
        );
        assert_eq!(
            wanted(HostPathType::DirectoryOrCreate, &new_file),
            Some("a directory")
        );
        assert_eq!(wanted(HostPathType::File, &new_dir), Some("a file"));
        assert_eq!(wanted(HostPathType::Socket, &new_file), Some("a socket"));
        let missing = prepare_host_path(HostPathType::File, &dir.path().join("missing"));
        assert!(
            matches!(&missing, Err(VolumeFileError::Volume { source, .. }) if source.kind() == std::io::ErrorKind::NotFound),
            "{missing:?}"
        );
        assert!(
            prepare_host_path(HostPathType::FileOrCreate, &dir.path().join("no/parent")).is_err()
        );
        prepare_host_path(HostPathType::CharDevice, Path::new("/dev/null")).unwrap();
        assert_eq!(
            wanted(HostPathType::BlockDevice, Path::new("/dev/null")),
            Some("a block device")
        );
        prepare_host_path(HostPathType::Unchecked, &dir.path().join("anything")).unwrap();
    }
}
