//! Permission bits and special file kinds on Windows: files have ACLs, not mode bits, so a
//! mode is not applied and every mode matches; sockets and devices are not files, so no path
//! is one.

use std::fs::{DirBuilder, FileType, OpenOptions};
use std::io;
use std::path::Path;

use super::Special;

/// `options` unchanged: Windows files take the ACL of their directory.
pub fn create_file_with_mode(options: &mut OpenOptions, _mode: u32) -> &mut OpenOptions {
    options
}

/// A plain directory builder: Windows directories take the ACL of their parent.
#[must_use]
pub fn dir_builder(_mode: u32) -> DirBuilder {
    DirBuilder::new()
}

/// Nothing to do: Windows files have no mode bits.
///
/// # Errors
/// Never.
pub fn set_mode(_path: &Path, _mode: u32) -> io::Result<()> {
    Ok(())
}

/// Whether the file at `path` exists: with no mode bits, every mode matches.
#[must_use]
pub fn has_mode(path: &Path, _mode: u32) -> bool {
    path.exists()
}

/// Creates a symbolic link at `link` pointing to `target`, a directory link when `target`
/// (relative to the link's directory) is one, as Windows tells the two apart.
///
/// # Errors
/// The I/O error of `CreateSymbolicLinkW`.
pub fn symlink(target: &Path, link: &Path) -> io::Result<()> {
    let resolved = link
        .parent()
        .map_or_else(|| target.to_path_buf(), |dir| dir.join(target));
    if resolved.is_dir() {
        std::os::windows::fs::symlink_dir(target, link)
    } else {
        std::os::windows::fs::symlink_file(target, link)
    }
}

/// Never: sockets and devices are not files on Windows.
#[must_use]
pub fn is_special(_file_type: &FileType, _kind: Special) -> bool {
    false
}

/// No permission bits: a mode read here is only ever handed back to
/// [`create_file_with_mode`], which ignores it.
#[must_use]
pub fn mode_of(_metadata: &std::fs::Metadata) -> u32 {
    0o644
}
