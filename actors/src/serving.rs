//! What the node's HTTP server (the `sergeant-server` crate) is given by the tree, and how the
//! tree asks it for its listeners.
//!
//! The server sits above the actors: it reads the pod manager, the runtime and the live
//! configuration, so it depends on this crate, not the other way round. The tree therefore
//! takes the server's listeners as a [`ServerChildren`] function from the binary and hands it
//! a [`ServerDeps`] once the children it reads exist.

use metrics_exporter_prometheus::PrometheusHandle;
use sergeant_messages::pods::SourceSnapshot;
use sergeant_supervisor::{ChildRef, ChildSpec, Supervisor, TreeHealth};
use tokio::sync::watch;

use crate::config_feed::ConfigState;
use crate::pod_manager::PodManager;

/// The listeners of the `server` supervisor, built from what the tree gives them
/// (`sergeant_server::child_specs` in the binary).
pub type ServerChildren = fn(&ServerDeps) -> Vec<ChildSpec>;

/// What the server needs from the rest of the agent.
#[derive(Clone)]
pub struct ServerDeps {
    /// The root supervisor, for `/debug/supervision`.
    pub root: ChildRef<Supervisor>,
    /// What the supervisors publish of the tree and the main loop's heartbeat, for `/healthz`.
    pub health: TreeHealth,
    /// The Prometheus recorder's handle, for `/metrics`.
    pub metrics: PrometheusHandle,
    /// The live configuration, for `/debug/config` and the listen addresses.
    pub config: watch::Receiver<ConfigState>,
    /// The pod manager, for `/pods`.
    pub pods: ChildRef<PodManager>,
    /// When PLEG last relisted, for `/healthz`.
    pub pleg: watch::Receiver<Option<std::time::Instant>>,
    /// The static pod source's view, for `/debug/sources`.
    pub file_source: watch::Receiver<SourceSnapshot>,
    /// The API pod source's view (never synced when standalone), for `/debug/sources`.
    pub api_source: watch::Receiver<SourceSnapshot>,
    /// The API server client in managed mode: tokens and authorization are checked with it.
    pub api: Option<kube::Client>,
    /// The runtime, for container logs and commands.
    pub port: crate::runtime::RuntimePort,
    /// The stats provider's samples, for `/stats/summary` and `/metrics/resource`.
    pub stats: crate::stats::StatsFeed,
}
