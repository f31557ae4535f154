//! hostPath volumes on the node: checking what is at the path, or creating it, as the
//! volume's type says.

use std::fs::{File, OpenOptions};
use std::path::Path;

use sergeant_core::volumes::HostPathType;

use crate::file_mode::{create_file_with_mode, dir_builder, is_special, Special};

/// Checks `path` against the hostPath type `kind`, creating it for the `…OrCreate` types. The
/// error is a reason for messages.
pub(super) fn prepare_host_path(kind: HostPathType, path: &Path) -> Result<(), String> {
    let io = |e: std::io::Error| sergeant_core::spec::io_reason(&e);
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
        Err(format!("is not {wanted}"))
    }
}

fn exists(path: &Path) -> Result<bool, String> {
    path.try_exists()
        .map_err(|e| sergeant_core::spec::io_reason(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

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
            prepare_host_path(HostPathType::Directory, &new_file),
            Err("is not a directory".into())
        );
        assert_eq!(
            prepare_host_path(HostPathType::DirectoryOrCreate, &new_file),
            Err("is not a directory".into())
        );
        assert_eq!(
            prepare_host_path(HostPathType::File, &new_dir),
            Err("is not a file".into())
        );
        assert_eq!(
            prepare_host_path(HostPathType::Socket, &new_file),
            Err("is not a socket".into())
        );
        assert!(prepare_host_path(HostPathType::File, &dir.path().join("missing")).is_err());
        assert!(
            prepare_host_path(HostPathType::FileOrCreate, &dir.path().join("no/parent")).is_err()
        );
        prepare_host_path(HostPathType::CharDevice, Path::new("/dev/null")).unwrap();
        assert_eq!(
            prepare_host_path(HostPathType::BlockDevice, Path::new("/dev/null")),
            Err("is not a block device".into())
        );
        prepare_host_path(HostPathType::Unchecked, &dir.path().join("anything")).unwrap();
    }
}
