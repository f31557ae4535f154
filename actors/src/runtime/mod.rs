//! The runtime side of the tree: the runtime-adapter slot, which serves the runtime port and
//! hot-swaps the adapter behind it when the configuration changes, and relays container event
//! subscriptions to the adapter in service, and hands the runtime the node's pod CIDR.
//!
//! Entry point: [`RuntimeAdapter`]. It never names a concrete adapter: `main` hands it an
//! [`AdapterFactory`] that starts whichever adapter an [`AdapterSpec`] asks for.

mod adapter;
mod events;
mod health;
mod pod_cidr;
mod port;
mod runtime_time;
mod spec;

pub use adapter::{AdapterFactory, AdapterStartError, RuntimeAdapter, StartedAdapter};
pub use port::RuntimePort;
pub use runtime_time::time_in_runtime;
pub use spec::AdapterSpec;
