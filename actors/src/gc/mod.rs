//! Garbage collection of dead containers, idle sandboxes and the log directories of gone pods,
//! as the upstream kubelet's container GC, with one guarantee more: the newest instance of every
//! container of a pod that exists is never removed (the pod actor reads init completion, last
//! state and restart counts from it).
//!
//! Entry point: [`child_spec`], the `gc` worker of the `node` supervisor ([`GarbageCollector`]).
//! [`sergeant_core::gc`] decides what a pass removes (`log_dirs`: which pod log directories
//! are stale), `sergeant_host::log_dirs` lists them, `collect` runs one pass against the
//! runtime.

mod actor;
pub(crate) mod collect;

pub use actor::{child_spec, GarbageCollector};
