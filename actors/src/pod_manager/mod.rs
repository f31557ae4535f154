//! The pod manager: merges what the pod sources want, admits pods, and has one pod actor per
//! admitted pod run under the pod supervisor ([`pod_supervisor`]) — assigning each its pod,
//! updating it (a changed spec, labels or annotations; a resize once the node allocated it,
//! `resizes`; the allocations outlive a restart, `checkpoint`) and terminating it, and reporting a pod whose actor was given up past its
//! restart intensity. It also finds pods that run on the node but no source wants any more
//! (removed while sergeant was down) and terminates them, once every source has been read.
//!
//! Entry points: [`PodManager`], and [`pod_supervisor`] for its pod actors.

mod actor;
mod checkpoint;
mod children;
mod gave_up;
mod resizes;
mod runtime_features;

pub use actor::{
    EvictPod, ExistingPodUids, ExistingPods, LifecycleEvents, ListPods, PodManager, PodManagerDeps,
};
pub use children::{pod_supervisor, PodAssignment, PodAssignments, POD_SUPERVISOR};
