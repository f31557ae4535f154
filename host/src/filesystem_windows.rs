//! Filesystem facts on Windows: `GetDiskFreeSpaceExW` for a volume's space (Windows volumes
//! have no fixed inode count), the creation time for a file's identity (the stable standard
//! library has no file index), positioned reads with `seek_read`.

use std::fs::{File, Metadata};
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::fs::{FileExt, MetadataExt};
use std::path::Path;

use windows_sys::Win32::Storage::FileSystem::GetDiskFreeSpaceExW;

use super::Space;

/// The size and free space of the volume holding `path`; no inode counts.
///
/// # Errors
/// The I/O error of `GetDiskFreeSpaceExW`.
pub fn space(path: &Path) -> io::Result<Space> {
    let wide: Vec<u16> = path.as_os_str().encode_wide().chain(Some(0)).collect();
    let (mut available, mut total, mut free) = (0u64, 0u64, 0u64);
    // SAFETY: `wide` is a NUL-terminated UTF-16 path that outlives the call, and the three
    // out-pointers point to live u64s.
    let ok = unsafe { GetDiskFreeSpaceExW(wide.as_ptr(), &mut available, &mut total, &mut free) };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Space {
        total_bytes: total,
        free_bytes: free,
        available_bytes: available,
        inodes: None,
        inodes_free: None,
    })
}

/// The bytes the file of `metadata` occupies on disk, taken as its length: the stable
/// standard library does not give the allocation size.
#[must_use]
pub fn disk_bytes(metadata: &Metadata) -> u64 {
    metadata.len()
}

/// One device for every file: the stable standard library does not tell Windows volumes
/// apart, so a directory tree is measured whole.
#[must_use]
pub fn device_of(_metadata: &Metadata) -> u64 {
    0
}

/// What tells one file from another: its creation time (a file written anew after a rotation
/// is created anew).
#[must_use]
pub fn identity_of(metadata: &Metadata) -> (u64, u64) {
    (metadata.creation_time(), 0)
}

/// Reads into `buffer` from `offset` of `file`.
///
/// # Errors
/// The I/O error of `ReadFile`.
pub fn read_at(file: &File, buffer: &mut [u8], offset: u64) -> io::Result<usize> {
    file.seek_read(buffer, offset)
}
