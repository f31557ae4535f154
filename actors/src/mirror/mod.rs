//! Mirror pods: the API server's copies of the node's static pods (managed mode), so the
//! cluster sees them (`kubectl get pods`) and their status, as upstream.
//!
//! The `mirror-pods` actor ([`MirrorPods`]) watches the node's pods (the mirror pods among them
//! kept by `sergeant_kube_api::MirrorStore`), compares the mirror pods with the static pods and
//! makes the mirror pod of each (`sergeant_core::mirror`), and writes them (`write`). It
//! publishes the mirror pods by static pod hash ([`MirrorView`]): the status manager writes a
//! static pod's status to its mirror pod, which has a UID of its own.

mod actor;
mod write;

pub use actor::MirrorPods;

use std::collections::BTreeMap;
use std::sync::Arc;

use kube::Client;
use sergeant_messages::pods::core::Pod;
use sergeant_messages::pods::SourceSnapshot;
use tokio::sync::watch;

use sergeant_supervisor::{ChildSpec, Slot};

/// The mirror pods in the API server, by the hash (UID) of their static pod.
pub type MirrorView = BTreeMap<String, Arc<Pod>>;

/// The `mirror-pods` child of the `pods` supervisor (managed mode): mirrors the static pods of
/// `statics` on node `node` through `client`, publishing on `out` (which outlives restarts).
#[must_use]
pub fn child_spec(
    client: Client,
    node: String,
    statics: watch::Receiver<SourceSnapshot>,
    out: watch::Sender<MirrorView>,
) -> ChildSpec {
    ChildSpec::worker("mirror-pods", &Slot::new("mirror-pods"), move |env| {
        MirrorPods::new(
            env,
            client.clone(),
            node.clone(),
            statics.clone(),
            out.clone(),
        )
    })
}
