//! [`VolumeFileError`]: why the node-side work on a pod's volume failed.

use std::io;
use std::path::{Path, PathBuf};

#[cfg(target_os = "linux")]
use nix::errno::Errno;
use sergeant_core::spec::io_reason;

use crate::mountinfo::MountTableError;

/// Why the node-side work on a pod's volumes failed: a file, directory or link of a volume
/// could not be made, changed or removed, a hostPath is not of its type, a payload path is not
/// safe, or a mount could not be made or removed. It exists so the volume code passes one
/// error up with `?`, keeping the path and the I/O error (and so its [`io::ErrorKind`]) until
/// the one place that turns it into the pod's `VolumeError`, `SpecError` or `SubPathError`
/// (the core crate's, whose reasons are text). Its Display is that reason.
///
/// Every variant about a path carries it; the ones whose message leaves it out say so: there
/// the message this goes into names the path already (the volume's own, or the mount point).
#[derive(Debug, thiserror::Error)]
pub enum VolumeFileError {
    /// An I/O call on a file, directory or link of a volume failed.
    #[error("{}: {}", path.display(), io_reason(source))]
    Io {
        /// The path it was called on.
        path: PathBuf,
        /// Why it failed.
        #[source]
        source: io::Error,
    },
    /// An I/O call on the volume's own path (its directory, or the hostPath) failed. The
    /// message leaves the path out: the pod's volume error names it.
    #[error("{}", io_reason(source))]
    Volume {
        /// The volume's path.
        path: PathBuf,
        /// Why it failed.
        #[source]
        source: io::Error,
    },
    /// A hostPath is not what its type asks for (the message leaves the path out, as
    /// [`Self::Volume`]).
    #[error("is not {wanted}")]
    NotOfType {
        /// The hostPath.
        path: PathBuf,
        /// What the type asks for: `a directory`, `a file`, `a socket`, …
        wanted: &'static str,
    },
    /// An API-backed volume was to be written without its content (it was never fetched).
    #[error("its content is not known")]
    NoContent,
    /// A path of an API-backed volume's content is absolute, holds `..`, starts with `..`
    /// (the layout's own names) or is empty.
    #[error("{path:?} must be a relative path without \"..\" that does not start with \"..\"")]
    UnsafePath {
        /// The path as the content gives it.
        path: String,
    },
    /// A path of an API-backed volume's content is below another path of it, which is a file.
    #[error("{path:?} is below the file {parent:?}")]
    BelowFile {
        /// The path below.
        path: String,
        /// The file it is below.
        parent: String,
    },
    /// The node's mount table could not be read.
    #[error(transparent)]
    MountTable(#[from] MountTableError),
    /// The kernel refused to mount a memory emptyDir's tmpfs (the message leaves the path
    /// out, as [`Self::Volume`]).
    #[cfg(target_os = "linux")]
    #[error("mounting a tmpfs ({options}): {}", errno.desc())]
    MountTmpfs {
        /// The volume's directory.
        path: PathBuf,
        /// The mount options (`size=…`, or none).
        options: String,
        /// The kernel's reason.
        errno: Errno,
    },
    /// A memory emptyDir needs a tmpfs, which Windows does not have.
    #[cfg(windows)]
    #[error("emptyDir medium Memory needs a tmpfs, which Windows nodes do not have")]
    NoTmpfs,
    /// The kernel refused to unmount a volume's mount at the pod's teardown. The message
    /// leaves the mount point out: the teardown's error names it.
    #[cfg(target_os = "linux")]
    #[error("unmounting: {}", errno.desc())]
    Unmount {
        /// The mount point.
        path: PathBuf,
        /// The kernel's reason.
        errno: Errno,
    },
    /// The kernel refused to unmount a subPath mount point.
    #[cfg(target_os = "linux")]
    #[error("{}: unmounting: {}", path.display(), errno.desc())]
    UnmountSubPath {
        /// The mount point.
        path: PathBuf,
        /// The kernel's reason.
        errno: Errno,
    },
    /// A subPath mount point is still mounted after as many unmounts as sergeant ever stacks
    /// there.
    #[cfg(target_os = "linux")]
    #[error("{}: still mounted after {unmounts} unmounts", path.display())]
    StillMounted {
        /// The mount point.
        path: PathBuf,
        /// How many unmounts were done.
        unmounts: usize,
    },
}

impl VolumeFileError {
    /// Turns an I/O error on `path` into [`Self::Io`], for `map_err`.
    pub(crate) fn io(path: &Path) -> impl Fn(io::Error) -> Self + Copy + '_ {
        move |source| Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// Turns an I/O error on the volume's own `path` into [`Self::Volume`], for `map_err`.
    pub(crate) fn volume(path: &Path) -> impl Fn(io::Error) -> Self + Copy + '_ {
        move |source| Self::Volume {
            path: path.to_path_buf(),
            source,
        }
    }
}
