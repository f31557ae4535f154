//! Managed mode's node: registration of the Node object, its status (capacity, allocatable,
//! conditions, addresses, nodeInfo, images) and its lease in `kube-node-lease`, as the
//! upstream kubelet keeps them.
//!
//! Entry point: [`child_spec`], the `node-status` worker of the `node` supervisor
//! ([`NodeStatus`]). `sergeant_host::machine` reads the machine facts and
//! `sergeant_core::node_status` turns them into the Node; `sync` runs one status round and
//! [`lease`] one renewal.

mod actor;
mod error;
pub mod lease;
mod register;
mod sync;

pub use actor::{ManagedDeps, NodeStatus};
pub use error::ApiCallError;

use tokio::sync::watch;

use crate::config_feed::ConfigState;
use sergeant_supervisor::{ChildSpec, Slot};

/// The `node-status` worker: managed when `managed` is given (`--kubeconfig`), otherwise a
/// standalone placeholder that says there is no API server.
#[must_use]
pub fn child_spec(config: watch::Receiver<ConfigState>, managed: Option<ManagedDeps>) -> ChildSpec {
    ChildSpec::worker("node-status", &Slot::new("node-status"), move |env| {
        NodeStatus::new(env, config.clone(), managed.clone())
    })
}
