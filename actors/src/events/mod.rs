//! Events: what happened to a pod (an image pulled, a container started, a probe failed) or to
//! the node (image garbage collection short of its goal), as the upstream kubelet reports it —
//! `core/v1` Events with upstream's reasons and messages.
//!
//! Pod actors emit through an [`EventSink`] (a bounded queue that never blocks them; a full
//! queue drops and counts) — bound to their pod as [`PodEvents`], and for the work deep in a
//! sync, through the pod's scope ([`PodEvents::scope`]). In managed mode the `event-recorder`
//! ([`EventRecorder`]) correlates them (`sergeant_core::events::correlate`: rate limit,
//! combine, count repeats) and writes them (`write`); standalone, events are only logged at
//! debug level.
//!
//! Metric: `sergeant_events_total{result}`.

mod inbox;
mod recorder;
mod scope;
mod sink;
mod write;

pub use inbox::Inbox;
pub use recorder::EventRecorder;
pub use scope::{container_event, pod_event};
pub use sergeant_core::events::{go_millis, reason, EventType, Involved, ObjectKind, Record};
pub use sink::{channel, EventSink, PodEvents};

use kube::Client;

use sergeant_supervisor::{ChildSpec, Slot};

/// The counter of events by result.
const EVENTS_TOTAL: &str = "sergeant_events_total";

/// The `event-recorder` child of the `pods` supervisor, in managed mode only: writes what
/// `inbox` receives through `client` as the kubelet of `node`.
#[must_use]
pub fn child_spec(client: Client, node: String, inbox: Inbox) -> ChildSpec {
    const NAME: &str = "event-recorder";
    ChildSpec::worker(NAME, &Slot::new(NAME), move |env| {
        EventRecorder::new(env, client.clone(), node.clone(), inbox.clone())
    })
}
