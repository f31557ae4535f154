//! The pod whose work is running, for the code deep in a sync or a termination (pulling,
//! starting, stopping a container, setting up a volume) that emits events without every function on the way
//! passing a recorder along: the pod actor runs that work inside [`PodEvents::scope`], the way
//! it runs inside the pod's tracing span. Outside a scope (a unit test, say), nothing is
//! emitted.

use std::future::Future;

use super::sink::PodEvents;
use sergeant_core::events::EventType;

tokio::task_local! {
    static CURRENT: PodEvents;
}

impl PodEvents {
    /// Runs `work` with these as the events of the current pod.
    pub fn scope<F: Future>(self, work: F) -> impl Future<Output = F::Output> {
        CURRENT.scope(self, work)
    }
}

/// Emits an event about `container` of the pod whose work is running, if any.
pub fn container_event(container: &str, kind: EventType, reason: &'static str, message: String) {
    // Outside a scope there is no pod to attach the event to; the work carries on.
    let _ = CURRENT.try_with(|events| events.container(container, kind, reason, message));
}

/// Emits an event about the pod whose work is running as a whole, if any.
pub fn pod_event(kind: EventType, reason: &'static str, message: String) {
    let _ = CURRENT.try_with(|events| events.pod(kind, reason, message));
}

#[cfg(test)]
mod tests {
    use super::*;
    use sergeant_messages::pods::core::Pod;

    #[tokio::test]
    async fn events_reach_the_pod_of_the_scope_only() {
        container_event("c", EventType::Normal, "Started", "nowhere".to_owned());
        let (sink, inbox) = crate::events::channel();
        let mut lease = inbox.lease().unwrap();
        let mut pod = Pod::default();
        pod.metadata.name = Some("web".to_owned());
        let events = sink.for_pod(&pod);
        events
            .scope(async {
                container_event("c", EventType::Normal, "Started", "here".to_owned());
                pod_event(EventType::Warning, "FailedMount", "the pod".to_owned());
            })
            .await;
        let got = futures::StreamExt::next(&mut lease).await.unwrap();
        assert_eq!(
            (got.object.name.as_str(), got.message.as_str()),
            ("web", "here")
        );
        assert_eq!(got.object.field_path.as_deref(), Some("spec.containers{c}"));
        let got = futures::StreamExt::next(&mut lease).await.unwrap();
        assert_eq!(
            (got.object.field_path, got.kind, got.message.as_str()),
            (None, EventType::Warning, "the pod")
        );
    }
}
