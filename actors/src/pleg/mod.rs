//! The pod lifecycle event generator: relists the runtime and tells the pod manager what
//! changed, so pod actors sync when something happened instead of polling the runtime each.
//!
//! Entry point: [`Pleg`]. Relisting is the mechanism and its diff
//! (`sergeant_core::pleg::diff`) the one source of what changed. Where the runtime streams CRI
//! container events, each event triggers a relist at once and the periodic relist slows to
//! upstream's evented 300 s safety net; where it does not (containerd 1.6 answers
//! `Unimplemented`), or the stream breaks, the PLEG relists every second, as
//! `sergeant_core::pleg::subscription` decides.

mod actor;
mod events;

pub use actor::{Pleg, PlegHealth};
