//! One pod on this node: its actor ([`worker`]) and the level-triggered sync it runs
//! ([`sync`]: it looks at the runtime with [`observe`] — again after its changes as [`look`]
//! decides — asks `sergeant_core::plan` what to do, with the probe verdicts it keeps
//! (`ProbeVerdicts`), and carries the plan out (`execute`): a sandbox with its volumes
//! (`sandbox`), containers started with [`start`] (pulling with the pod's [`credentials`]) and
//! stopped with [`kill`], [`hooks`] run, file work placed with [`file_work`], running containers
//! and the pod cgroup resized in place (`resize`); it stops part-way when the actor raises its
//! [`interrupt`], and fails with a typed [`error`]); and how its status is computed from what
//! the runtime shows ([`report`]). The pure parts it shares with the rest of the agent (labels,
//! back-off, container kinds, the runtime view, the plan) live in `sergeant_core`.

pub mod credentials;
pub mod error;
mod execute;
pub mod file_work;
pub mod hooks;
pub mod interrupt;
pub mod kill;
pub mod look;
pub mod observe;
pub mod probe;
pub mod report;
mod resize;
mod sandbox;
pub mod start;
pub mod sync;
pub mod target;
pub mod volume_events;
pub mod worker;
