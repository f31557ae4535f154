//! The pod lifecycle event generator's decisions; the PLEG actor (`sergeant_actors::pleg`)
//! relists the runtime and acts on them.
//!
//! [`diff`] turns two relists into [`diff::LifecycleEvent`]s, the one source of what changed;
//! [`subscription`] says how often to relist (every second, or every five minutes while CRI
//! container events stream) and what to do when the runtime refuses or breaks the stream.

pub mod diff;
pub mod subscription;
