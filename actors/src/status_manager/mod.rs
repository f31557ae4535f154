//! The status manager: pod status → API server, as upstream's status manager, but reporting a
//! change as soon as a pod actor computes it instead of in periodic batches.
//!
//! Entry point: [`StatusManager`]. The pod manager hands it every status report of an API pod
//! or a static pod — written to its mirror pod — ([`ReportStatus`]) and every finished
//! termination ([`PodFinished`]). Each pod has a latest-wins queue with one write in flight
//! (`sergeant_core::status::write_queue`): a status is patched only when it differs from what
//! was last written, with the pod's UID as precondition (`write`), merged with what other
//! components own (`sergeant_core::status::merge`), and retried with back-off; a pod being
//! deleted is deleted (grace period 0) once terminated and its final status written. At most a
//! few writes are under way at once (`sergeant_core::status::write_slots`).

mod actor;
mod write;

pub use actor::{ApiViews, PodFinished, ReportStatus, StatusManager};
pub use write::WriteError;

use kube::Client;

use crate::pending::Pending;
use sergeant_supervisor::{ChildSpec, Slot};

/// The `status-manager` child of the `pods` supervisor: in managed mode (`managed` holds the
/// client and what it shows of the API server) the status manager published to `slot`;
/// standalone, a stand-in that says there is no API server.
#[must_use]
pub fn child_spec(slot: &Slot<StatusManager>, managed: Option<(Client, ApiViews)>) -> ChildSpec {
    const NAME: &str = "status-manager";
    match managed {
        Some((client, views)) => ChildSpec::worker(NAME, slot, move |env| {
            StatusManager::new(env, client.clone(), views.clone())
        }),
        None => ChildSpec::worker(NAME, &Slot::new(NAME), |env| Pending::standalone(env, NAME)),
    }
}
