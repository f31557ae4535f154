//! hostPath types: what must already be at the path, or what to create there.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// What a hostPath volume expects at its path (its `type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostPathType {
    /// `""`: no check at all.
    Unchecked,
    /// A directory, created (0755) when nothing is there.
    DirectoryOrCreate,
    /// An existing directory.
    Directory,
    /// A file, created empty (0644) when nothing is there; its directory must exist.
    FileOrCreate,
    /// An existing regular file.
    File,
    /// An existing UNIX socket.
    Socket,
    /// An existing character device.
    CharDevice,
    /// An existing block device.
    BlockDevice,
}

impl HostPathType {
    /// The type named `text` as it appears in a pod spec; `None` for an unknown name.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "" => HostPathType::Unchecked,
            "DirectoryOrCreate" => HostPathType::DirectoryOrCreate,
            "Directory" => HostPathType::Directory,
            "FileOrCreate" => HostPathType::FileOrCreate,
            "File" => HostPathType::File,
            "Socket" => HostPathType::Socket,
            "CharDevice" => HostPathType::CharDevice,
            "BlockDevice" => HostPathType::BlockDevice,
            _ => return None,
        })
    }

    /// Checks `path` against the type, creating it for the `…OrCreate` types. The error is a
    /// reason for messages.
    pub(super) fn prepare(self, path: &Path) -> Result<(), String> {
        let io = |e: std::io::Error| crate::pod::spec::io_reason(&e);
        match self {
            HostPathType::Unchecked => return Ok(()),
            HostPathType::DirectoryOrCreate if !exists(path)? => {
                return std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o755)
                    .create(path)
                    .map_err(io);
            }
            HostPathType::FileOrCreate if !exists(path)? => {
                return OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .mode(0o644)
                    .open(path)
                    .map(|_: File| ())
                    .map_err(io);
            }
            _ => {}
        }
        let file_type = std::fs::metadata(path).map_err(io)?.file_type();
        let (matches, wanted) = match self {
            HostPathType::DirectoryOrCreate | HostPathType::Directory => {
                (file_type.is_dir(), "a directory")
            }
            HostPathType::FileOrCreate | HostPathType::File => (file_type.is_file(), "a file"),
            HostPathType::Socket => (file_type.is_socket(), "a socket"),
            HostPathType::CharDevice => (file_type.is_char_device(), "a character device"),
            HostPathType::BlockDevice => (file_type.is_block_device(), "a block device"),
            HostPathType::Unchecked => (true, ""),
        };
        if matches {
            Ok(())
        } else {
            Err(format!("is not {wanted}"))
        }
    }
}

fn exists(path: &Path) -> Result<bool, String> {
    path.try_exists()
        .map_err(|e| crate::pod::spec::io_reason(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse() {
        assert_eq!(HostPathType::parse(""), Some(HostPathType::Unchecked));
        assert_eq!(
            HostPathType::parse("CharDevice"),
            Some(HostPathType::CharDevice)
        );
        assert_eq!(HostPathType::parse("directory"), None);
    }

    #[test]
    fn types_are_checked_and_created() {
        let dir = tempfile::tempdir().unwrap();
        let new_dir = dir.path().join("a/b");
        HostPathType::DirectoryOrCreate.prepare(&new_dir).unwrap();
        assert!(new_dir.is_dir());
        HostPathType::Directory.prepare(&new_dir).unwrap();
        let new_file = dir.path().join("f");
        HostPathType::FileOrCreate.prepare(&new_file).unwrap();
        assert!(new_file.is_file());
        HostPathType::File.prepare(&new_file).unwrap();
        assert_eq!(
            HostPathType::Directory.prepare(&new_file),
            Err("is not a directory".into())
        );
        assert_eq!(
            HostPathType::DirectoryOrCreate.prepare(&new_file),
            Err("is not a directory".into())
        );
        assert_eq!(
            HostPathType::File.prepare(&new_dir),
            Err("is not a file".into())
        );
        assert_eq!(
            HostPathType::Socket.prepare(&new_file),
            Err("is not a socket".into())
        );
        assert!(HostPathType::File
            .prepare(&dir.path().join("missing"))
            .is_err());
        assert!(HostPathType::FileOrCreate
            .prepare(&dir.path().join("no/parent"))
            .is_err());
        HostPathType::CharDevice
            .prepare(Path::new("/dev/null"))
            .unwrap();
        assert_eq!(
            HostPathType::BlockDevice.prepare(Path::new("/dev/null")),
            Err("is not a block device".into())
        );
        HostPathType::Unchecked
            .prepare(&dir.path().join("anything"))
            .unwrap();
    }
}
