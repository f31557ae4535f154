//! What the node's filesystems say about themselves and their files, where the two operating
//! systems answer differently: a filesystem's size and free space ([`space`]), what a file
//! occupies on disk ([`disk_bytes`]), which device a file is on ([`device_of`]), whether two
//! looks are at the same file ([`identity_of`]), and reading at an offset ([`read_at`],
//! [`read_exact_at`]). The unix side is in `filesystem_unix.rs`, the Windows side in
//! `filesystem_windows.rs`.

#[cfg(unix)]
#[path = "filesystem_unix.rs"]
mod platform;
#[cfg(windows)]
#[path = "filesystem_windows.rs"]
mod platform;

pub use platform::{device_of, disk_bytes, identity_of, read_at, space};

/// Fills `buffer` from `offset` of `file`, reading as often as it takes.
///
/// # Errors
/// The read's I/O error, or `UnexpectedEof` when the file ends first.
pub fn read_exact_at(
    file: &std::fs::File,
    mut buffer: &mut [u8],
    mut offset: u64,
) -> std::io::Result<()> {
    while !buffer.is_empty() {
        match read_at(file, buffer, offset) {
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(read) => {
                buffer = &mut buffer[read..];
                offset = offset.saturating_add(u64::try_from(read).unwrap_or(u64::MAX));
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The size and free space of one filesystem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Space {
    /// Its size in bytes.
    pub total_bytes: u64,
    /// Bytes not in use.
    pub free_bytes: u64,
    /// Bytes an unprivileged user may still use.
    pub available_bytes: u64,
    /// Its inodes, where the filesystem has a fixed number (not on Windows).
    pub inodes: Option<u64>,
    /// Its free inodes, likewise.
    pub inodes_free: Option<u64>,
}
