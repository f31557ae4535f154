//! Why `/stats/summary` could not be answered.

use std::path::PathBuf;

use sergeant_messages::runtime_error::RuntimeError;

/// A failure to gather one part of the summary; the request answers 500 with it.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
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
    /// A runtime call failed.
    #[error("runtime call {operation}: {source}")]
    Runtime {
        /// The CRI operation.
        operation: &'static str,
        /// The runtime's error.
        source: RuntimeError,
    },
    /// The pod manager could not be asked for the pods.
    #[error("the pod manager is unavailable: {0}")]
    PodManager(#[from] sergeant_supervisor::SendError),
    /// The configuration does not name the node.
    #[error("node name: {0}")]
    NodeName(String),
    /// The latest background sample of the pods failed; the next one is taken within
    /// the refresh period.
    #[error("the latest pod stats sample failed: {0}")]
    Sampling(std::sync::Arc<StatsError>),
    /// The background sampling task ended without a sample (it panicked).
    #[error("the pod stats sampler stopped")]
    SamplerStopped,
    /// A blocking read panicked or was cancelled.
    #[error("a blocking stats task failed: {0}")]
    Blocking(#[from] tokio::task::JoinError),
}
