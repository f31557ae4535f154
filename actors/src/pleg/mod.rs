//! The pod lifecycle event generator: relists the runtime and tells the pod manager what
//! changed, so pod actors sync when something happened instead of polling the runtime each.
//!
//! Entry point: [`Pleg`]. containerd 1.6 answers `GetContainerEvents` with `Unimplemented`, so
//! relisting (every second, as upstream) is the mechanism; [`diff`] turns two relists into
//! events.

mod actor;
mod diff;

pub use actor::{Pleg, PlegHealth};
pub use diff::{ObjectState, RuntimeView};
