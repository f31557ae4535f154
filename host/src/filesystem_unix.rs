//! Filesystem facts on unix: `statvfs(3)`, the device and inode numbers of `stat(2)`,
//! `pread(2)`.

use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

use super::Space;

/// The size, free space and inodes of the filesystem holding `path`.
///
/// # Errors
/// The I/O error of `statvfs(3)`.
pub fn space(path: &Path) -> io::Result<Space> {
    let vfs = nix::sys::statvfs::statvfs(path).map_err(io::Error::from)?;
    let fragment = vfs.fragment_size();
    Ok(Space {
        total_bytes: vfs.blocks().saturating_mul(fragment),
        free_bytes: vfs.blocks_free().saturating_mul(fragment),
        available_bytes: vfs.blocks_available().saturating_mul(fragment),
        inodes: Some(vfs.files()),
        inodes_free: Some(vfs.files_free()),
    })
}

/// Bytes per `st_blocks` unit.
const BLOCK_BYTES: u64 = 512;

/// The bytes the file of `metadata` occupies on disk (its allocated blocks).
#[must_use]
pub fn disk_bytes(metadata: &Metadata) -> u64 {
    metadata.blocks().saturating_mul(BLOCK_BYTES)
}

/// The device the file of `metadata` is on.
#[must_use]
pub fn device_of(metadata: &Metadata) -> u64 {
    metadata.dev()
}

/// What tells one file from another: its device and inode.
#[must_use]
pub fn identity_of(metadata: &Metadata) -> (u64, u64) {
    (metadata.dev(), metadata.ino())
}

/// Reads into `buffer` from `offset` of `file`, without moving a shared cursor.
///
/// # Errors
/// The I/O error of `pread(2)`.
pub fn read_at(file: &File, buffer: &mut [u8], offset: u64) -> io::Result<usize> {
    file.read_at(buffer, offset)
}
