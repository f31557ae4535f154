//! The pod manager: merges what the pod sources want, admits pods, and runs one pod actor per
//! admitted pod — starting, updating (a changed spec, labels or annotations), terminating and
//! (after a crash of one) restarting them. It also finds pods that run on the node but no
//! source wants any more (removed while sergeant was down) and terminates them, once every
//! source has been read.
//!
//! Entry point: [`PodManager`].

mod actor;
mod admission;
mod update;

pub use actor::{
    ExistingPodUids, ExistingPods, ListPods, PodManager, PodManagerDeps, PodReport, PodTerminated,
};
pub use admission::{admit, Rejection};
