//! One pod on this node: its actor ([`worker`]) and the level-triggered sync it runs
//! ([`sync`]: it looks at the runtime with [`observe`], again after its changes as [`look`]
//! decides, starts containers with [`start`] (pulling with the pod's [`credentials`]), stops
//! them with [`kill`], runs [`hooks`], places its file work with [`file_work`], and stops
//! part-way when the actor raises its [`interrupt`]); how its spec becomes runtime objects
//! ([`spec`], [`volumes`]); and how its status is computed from what the runtime shows
//! ([`status`], [`report`]). The pure parts it shares with the rest of the agent (labels,
//! back-off, container kinds, the runtime view) live in `sergeant_core`.

pub mod credentials;
pub mod file_work;
pub mod hooks;
pub mod http_get;
pub mod interrupt;
pub mod kill;
pub mod look;
pub mod observe;
pub mod probe;
pub mod report;
pub mod start;
pub mod sync;
pub mod target;
pub mod termination;
pub mod volume_events;
pub mod worker;
