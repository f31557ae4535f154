//! sergeant's actors: the kubelet's long-lived parts, each executing what `sergeant_core`
//! decides.
//!
//! Entry point: [`tree::build`] declares the whole supervision tree of ARCHITECTURE.md, and
//! `sergeant_supervisor::start_root` starts it. Everything long-lived runs as an actor under a
//! `sergeant_supervisor::Supervisor`.

pub mod cni;
pub mod config_feed;
pub mod config_watcher;
pub mod events;
pub mod eviction;
pub mod gc;
mod hangup;
pub mod image_gc;
pub mod logs;
pub mod mirror;
pub mod node_cgroups;
pub mod node_status;
pub mod pending;
pub mod pleg;
pub mod pod;
pub mod pod_manager;
pub mod pressure_feed;
pub mod runtime;
pub mod serving;
pub mod sources;
pub mod stats;
pub mod status_manager;
pub mod tree;
