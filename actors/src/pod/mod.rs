//! One pod on this node: its actor ([`worker`]) and the level-triggered sync it runs
//! ([`sync`], made of [`observe`], [`start`] (pulling with the pod's [`credentials`]),
//! [`kill`], [`hooks`] and [`backoff`], its file work placed by [`file_work`]); how its spec becomes runtime objects ([`spec`],
//! [`volumes`]); how its status is computed from what the runtime shows ([`status`],
//! [`report`]); and the labels that tie runtime objects back to it ([`labels`]).

pub mod backoff;
pub mod credentials;
pub mod file_work;
pub mod hooks;
pub mod http_get;
pub mod kill;
pub mod labels;
pub mod observe;
pub mod probe;
pub mod report;
pub mod spec;
pub mod start;
pub mod status;
pub mod sync;
pub mod target;
pub mod termination;
pub mod volumes;
pub mod worker;
