//! The node's stats provider: one supervised actor ([`provider::StatsProvider`], the
//! `stats-provider` child of the `node` supervisor) samples the node's counters, the runtime's
//! lists and container stats and each pod's host-side numbers every [`REFRESH_PERIOD`], always,
//! and publishes the latest [`Sample`] on a watch feed ([`StatsFeed`]). `/stats/summary` and
//! the eviction manager read that one feed.
//!
//! Entry point: [`child_spec`].

mod error;
mod provider;
mod sandbox;
mod view;

pub use error::SampleError;
pub use provider::{child_spec, StatsProvider, REFRESH_PERIOD};
pub use view::RuntimeView;

use std::sync::Arc;

use sergeant_host::cgroup::{CgroupCpu, CgroupMemory};
use sergeant_host::stats::node::NodeSample;
use sergeant_host::stats::pods::Host;
use sergeant_host::stats::Clock;
use tokio::sync::watch;

/// One reading of the node and its pods.
#[derive(Debug)]
pub struct Sample {
    /// The node's kernel counters and the filesystem of its root directory.
    pub node: NodeSample,
    /// What the runtime listed.
    pub view: RuntimeView,
    /// The host-side numbers, by sandbox id, and the filesystems of the writable layers and
    /// the image filesystem.
    pub host: Host,
    /// The pods' cgroup (`kubepods`), when there is one.
    pub pods: Option<PodsCgroup>,
}

/// The pods' cgroup as one sample read it: for `allocatableMemory.available` and the Summary
/// API's `pods` system container. A part that could not be read is `None`.
#[derive(Debug, Clone, Copy)]
pub struct PodsCgroup {
    /// When it was read.
    pub clock: Clock,
    /// Its memory.
    pub memory: Option<CgroupMemory>,
    /// Its CPU time.
    pub cpu: Option<CgroupCpu>,
}

/// The latest sample or why it could not be taken; `None` before the first.
pub type Latest = Option<Result<Arc<Sample>, Arc<SampleError>>>;

/// What readers of the stats hold.
pub type StatsFeed = watch::Receiver<Latest>;
