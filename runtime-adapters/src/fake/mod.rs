//! The fake runtime: an in-memory container runtime for hollow nodes and scale tests.
//!
//! The entry point is [`FakeAdapter`], the runtime-adapter actor that answers the runtime port
//! ([`RuntimeCall`](sergeant_messages::runtime::RuntimeCall)) from a [`FakeRuntime`] it owns,
//! instead of from containerd or CRI-O.
//!
//! Why it exists: a hollow node (upstream's kubemark idea) runs the whole kubelet — pod
//! admission, sync, status, leases — against a runtime that starts nothing, so one machine can
//! host hundreds of nodes and the control plane can be tested at scale. The fake runtime keeps
//! CRI's semantics as containerd implements them (ids, states, errors, filters, idempotent
//! removes) so the kubelet above it behaves exactly as on a real node, while each pod costs a
//! few hundred bytes and no process, task or timer.
//!
//! [`grpc::serve`] puts an adapter behind CRI's gRPC services on a socket or named pipe, so the
//! fake can stand in for a CRI runtime on machines that have none (Windows under Wine).
//!
//! The adapter also streams container events (CRI `GetContainerEvents`) for its state changes,
//! so a hollow node's PLEG is evented as on a runtime that streams them.
//!
//! With the `failpoints` feature, the failpoint `fake::call` fails any call with
//! `RuntimeError::Unavailable` (action `return(message)`) or panics the actor (action `panic`).

mod actor;
mod container;
mod containers;
mod dispatch;
mod errors;
mod events;
pub mod grpc;
mod ids;
mod images;
mod ipam;
mod labels;
mod reference;
mod sandbox_stats;
mod sandboxes;
mod state;
mod stats;
mod subscribers;
mod windows_stats;

pub use actor::FakeAdapter;
pub use state::FakeRuntime;
