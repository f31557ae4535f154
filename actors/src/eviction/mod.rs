//! The `eviction-manager` actor of the `node` supervisor: at every stats sample it observes
//! the eviction signals ([`observe`]), lets [`sergeant_core::eviction::decide`] decide, publishes
//! the node's pressure conditions on the [`crate::pressure_feed::PressureFeed`] (read by the node status and by
//! admission), and carries out the reclaim ([`reclaim`]): node-level first for the disk
//! signals of the filesystem holding the images (dead containers, then unused images through
//! [`crate::image_gc`]), then one pod at a time, waiting for its containers to stop and its
//! volumes to be torn down.
//!
//! Entry point: [`child_spec`].

mod actor;
mod observe;
mod reclaim;

pub use actor::{child_spec, EvictionDeps, EvictionManager};
