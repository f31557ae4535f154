//! The OTP-style supervision framework every long-lived part of sergeant runs under.
//!
//! Entry points: declare children with [`ChildSpec::worker`] and [`ChildSpec::supervisor`],
//! start the root with [`start_root`] (its health readable from any thread: [`TreeHealth`]), and reach children through the [`ChildRef`] of their
//! [`Slot`] (narrowed to one message type: [`ChildRecipient`]). A [`Supervisor`] detects a child's stop, error exit ([`ChildEnv::fail`]) and panic,
//! restarts by [`Strategy`](sergeant_messages::supervision::Strategy) with backoff, and escalates
//! past its [`RestartPolicy`]'s intensity. Children that come and go (pods, probe workers) live
//! under a [`DynamicSupervisor`], declared with [`ChildSpec::dynamic_supervisor`].

mod actor;
mod child;
mod dynamic;
mod env;
pub mod failpoint;
mod health;
mod life;
pub mod metrics;
mod policy;
mod recipient;
mod root;
mod running;
mod slot;
mod thread;

pub use actor::Supervisor;
pub use child::ChildSpec;
pub use dynamic::{
    inspect_with_get_tree, DynamicSpec, DynamicSupervisor, GiveUpPolicy, Incarnation, InspectChild,
    MakeChild, OnFailure, OnGiveUp, StartChild, StopChild,
};
pub use env::ChildEnv;
pub use health::{TreeHealth, HEARTBEAT_INTERVAL};
pub use policy::RestartPolicy;
pub use recipient::ChildRecipient;
pub use root::{start_root, RootExit, RootHandle};
pub use running::{spawn_actor, JoinOutcome, Running};
pub use slot::{Availability, ChildRef, Mark, SendError, Slot};
pub use thread::{spawn_actor_on_thread, SpawnError};
