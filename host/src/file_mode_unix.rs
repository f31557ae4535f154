//! Permission bits and special file kinds on unix: the modes are what they say.

use std::fs::{DirBuilder, FileType, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use super::Special;

/// `options` set to create files with `mode` (reduced by the umask; see [`set_mode`]).
pub fn create_file_with_mode(options: &mut OpenOptions, mode: u32) -> &mut OpenOptions {
    options.mode(mode)
}

/// A directory builder creating directories with `mode` (reduced by the umask).
#[must_use]
pub fn dir_builder(mode: u32) -> DirBuilder {
    let mut builder = DirBuilder::new();
    builder.mode(mode);
    builder
}

/// Sets the permission bits of `path` to exactly `mode`.
///
/// # Errors
/// The I/O error of `chmod(2)`.
pub fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// Whether the file at `path` has exactly the permission bits `mode` (setuid, setgid and
/// sticky included); false when it cannot be read.
#[must_use]
pub fn has_mode(path: &Path, mode: u32) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o7777 == mode)
}

/// Creates a symbolic link at `link` pointing to `target` (a directory or a file).
///
/// # Errors
/// The I/O error of `symlink(2)`.
pub fn symlink(target: &Path, link: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// Whether `file_type` is the special file `kind`.
#[must_use]
pub fn is_special(file_type: &FileType, kind: Special) -> bool {
    match kind {
        Special::Socket => file_type.is_socket(),
        Special::CharDevice => file_type.is_char_device(),
        Special::BlockDevice => file_type.is_block_device(),
    }
}

/// The permission bits of the file of `metadata`.
#[must_use]
pub fn mode_of(metadata: &std::fs::Metadata) -> u32 {
    metadata.permissions().mode() & 0o7777
}
