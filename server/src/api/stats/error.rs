//! Why `/stats/summary` could not be answered.

use std::sync::Arc;

use sergeant_actors::stats::SampleError;
use sergeant_host::stats::HostStatsError;

/// A failure to gather one part of the summary; the request answers 500 with it.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    /// A kernel or filesystem number of the node could not be read.
    #[error(transparent)]
    Host(#[from] HostStatsError),
    /// The pod manager could not be asked for the pods.
    #[error("the pod manager is unavailable: {0}")]
    PodManager(#[from] sergeant_supervisor::SendError),
    /// The configuration does not name the node.
    #[error("node name: {0}")]
    NodeName(String),
    /// The stats provider's latest sample failed; the next one is taken within its period.
    #[error("the latest stats sample failed: {0}")]
    Sampling(Arc<SampleError>),
    /// The stats provider's feed is gone (the agent is stopping).
    #[error("the stats provider stopped")]
    ProviderStopped,
    /// A blocking read panicked or was cancelled.
    #[error("a blocking stats task failed: {0}")]
    Blocking(#[from] tokio::task::JoinError),
}
