//! Why a stats sample could not be taken.

use sergeant_host::stats::HostStatsError;
use sergeant_messages::runtime_error::RuntimeError;

/// A failed sample; it is published as the latest until the next one.
#[derive(Debug, thiserror::Error)]
pub enum SampleError {
    /// A kernel or filesystem number could not be read.
    #[error(transparent)]
    Host(#[from] HostStatsError),
    /// A runtime call failed.
    #[error("runtime call {operation}: {source}")]
    Runtime {
        /// The CRI operation.
        operation: &'static str,
        /// The runtime's error.
        source: RuntimeError,
    },
    /// The configuration does not name the node.
    #[error("node name: {0}")]
    NodeName(String),
    /// A blocking read panicked or was cancelled.
    #[error("a blocking stats read failed: {0}")]
    Blocking(#[from] tokio::task::JoinError),
}
