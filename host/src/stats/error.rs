//! Why a kernel or filesystem number could not be read.

use std::path::PathBuf;

/// A failure to read one of the node's numbers; it names the file or directory.
#[derive(Debug, thiserror::Error)]
pub enum HostStatsError {
    /// A kernel or filesystem file could not be read.
    #[error("reading {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A kernel file did not have the expected shape.
    #[error("{}: {reason}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// `statvfs` failed on a directory.
    #[error("statvfs {}: {source}", path.display())]
    Statvfs {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}
