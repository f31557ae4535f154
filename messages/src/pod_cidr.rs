//! The pod CIDRs the control plane assigned to this node, on their way to the runtime.
//!
//! The node-status actor reads the Node every status round; when its `spec.podCIDRs` is set,
//! it tells the runtime-adapter actor with [`NodePodCidrs`], which hands the range to the
//! runtime (CRI `UpdateRuntimeConfig`) whenever the runtime does not have it yet, as upstream's
//! kubelet does on each node status update.

use actix::Message;

/// The Node's `spec.podCIDRs` as last read from the API server (never empty: a Node without
/// pod CIDRs sends nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodePodCidrs(pub Vec<String>);

impl Message for NodePodCidrs {
    type Result = ();
}
