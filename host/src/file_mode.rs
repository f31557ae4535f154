//! Unix permission bits and special file kinds, where the node has them: the unix side (modes
//! set at creation and checked after) in `file_mode_unix.rs`, the Windows side, where files
//! carry ACLs and no mode bits and where sockets and devices are not files, in
//! `file_mode_windows.rs`. Entry points: [`create_file_with_mode`], [`set_mode`],
//! [`has_mode`], [`mode_of`], [`dir_builder`], [`symlink`], [`is_special`].

#[cfg(unix)]
#[path = "file_mode_unix.rs"]
mod platform;
#[cfg(windows)]
#[path = "file_mode_windows.rs"]
mod platform;

pub use platform::{
    create_file_with_mode, dir_builder, has_mode, is_special, mode_of, set_mode, symlink,
};

/// The special file kinds a hostPath volume can require.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    /// A unix domain socket.
    Socket,
    /// A character device.
    CharDevice,
    /// A block device.
    BlockDevice,
}
