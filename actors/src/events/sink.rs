//! The handle pod actors emit events through: [`EventSink`], a bounded queue to the
//! `event-recorder` that never blocks (a full queue drops the event and counts it), and
//! [`PodEvents`], the same bound to one pod so callers only say what happened.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::SystemTime;

use sergeant_messages::pods::core::Pod;
use tokio::sync::mpsc;

use super::inbox::Inbox;
use super::EVENTS_TOTAL;
use sergeant_core::events::{reason, EventType, Involved, ObjectKind, Record};

/// How many events may wait for the recorder before new ones are dropped.
const QUEUE: usize = 1024;

/// Where events go: to the recorder in managed mode, only to the debug log standalone.
#[derive(Debug, Clone)]
pub struct EventSink {
    queue: Option<mpsc::Sender<Record>>,
}

/// A sink for managed mode and the inbox its recorder reads.
#[must_use]
pub fn channel() -> (EventSink, Inbox) {
    let (queue, inbox) = mpsc::channel(QUEUE);
    (EventSink { queue: Some(queue) }, Inbox::new(inbox))
}

impl EventSink {
    /// A sink for standalone mode: there is no API server to write to, so events are only
    /// logged at debug level.
    #[must_use]
    pub const fn standalone() -> Self {
        Self { queue: None }
    }

    /// Queues `record` for the recorder without waiting; when the queue is full the event is
    /// dropped and counted (`sergeant_events_total{result="dropped"}`).
    pub fn emit(&self, record: Record) {
        tracing::debug!(
            reason = record.reason,
            object = %record.object.name,
            field = record.object.field_path.as_deref().unwrap_or_default(),
            "event: {}",
            record.message
        );
        let Some(queue) = &self.queue else { return };
        if queue.try_send(record).is_err() {
            metrics::counter!(EVENTS_TOTAL, "result" => "dropped").increment(1);
        }
    }

    /// An event about node `node` itself (image garbage collection), written to the
    /// `default` namespace as upstream writes node events.
    pub fn node(&self, node: &str, kind: EventType, reason: &'static str, message: String) {
        self.emit(Record {
            object: Involved {
                kind: ObjectKind::Node,
                namespace: "default".to_owned(),
                name: node.to_owned(),
                uid: node.to_owned(),
                field_path: None,
            },
            kind,
            reason,
            message,
            at: SystemTime::now(),
        });
    }

    /// This sink bound to `pod`.
    #[must_use]
    pub fn for_pod(&self, pod: &Pod) -> PodEvents {
        let spec = pod.spec.iter();
        let init = spec
            .clone()
            .flat_map(|s| s.init_containers.iter().flatten())
            .map(|c| (c.name.clone(), "initContainers"));
        let ephemeral = spec
            .flat_map(|s| s.ephemeral_containers.iter().flatten())
            .map(|c| (c.name.clone(), "ephemeralContainers"));
        PodEvents {
            sink: self.clone(),
            pod: Involved {
                kind: ObjectKind::Pod,
                namespace: pod
                    .metadata
                    .namespace
                    .clone()
                    .unwrap_or_else(|| "default".to_owned()),
                name: pod.metadata.name.clone().unwrap_or_default(),
                uid: pod.metadata.uid.clone().unwrap_or_default(),
                field_path: None,
            },
            lists: Arc::new(init.chain(ephemeral).collect()),
        }
    }
}

/// The events of one pod: what the pod actor and its work emit through.
#[derive(Debug, Clone)]
pub struct PodEvents {
    sink: EventSink,
    pod: Involved,
    /// The spec list of each init and ephemeral container, by name: their field paths name
    /// it (the others are in `containers`).
    lists: Arc<BTreeMap<String, &'static str>>,
}

impl PodEvents {
    /// An event about container `container` of the pod (`involvedObject.fieldPath` names it).
    pub fn container(
        &self,
        container: &str,
        kind: EventType,
        reason: &'static str,
        message: String,
    ) {
        let list = self.lists.get(container).copied().unwrap_or("containers");
        let object = Involved {
            field_path: Some(format!("spec.{list}{{{container}}}")),
            ..self.pod.clone()
        };
        self.emit(object, kind, reason, message);
    }

    /// An event about the pod as a whole (a volume it cannot get, say).
    pub fn pod(&self, kind: EventType, reason: &'static str, message: String) {
        self.emit(self.pod.clone(), kind, reason, message);
    }

    fn emit(&self, object: Involved, kind: EventType, reason: &'static str, message: String) {
        self.sink.emit(Record {
            object,
            kind,
            reason,
            message,
            at: SystemTime::now(),
        });
    }

    /// The crash-loop event, once per sync that finds `container` waiting out its back-off
    /// (repeats are counted on one Event).
    pub fn back_off_restarting(&self, container: &str) {
        let pod = &self.pod;
        let message = format!(
            "Back-off restarting failed container {container} in pod {}_{}({})",
            pod.name, pod.namespace, pod.uid
        );
        self.container(container, EventType::Warning, reason::BACK_OFF, message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sergeant_messages::pods::core::{Container, EphemeralContainer, PodSpec};

    fn pod() -> Pod {
        let container = |name: &str| Container {
            name: name.to_owned(),
            ..Container::default()
        };
        let mut pod = Pod::default();
        pod.metadata.name = Some("web".to_owned());
        pod.metadata.uid = Some("u1".to_owned());
        pod.spec = Some(PodSpec {
            init_containers: Some(vec![container("setup")]),
            containers: vec![container("app")],
            ephemeral_containers: Some(vec![EphemeralContainer {
                name: "debug".to_owned(),
                ..EphemeralContainer::default()
            }]),
            ..PodSpec::default()
        });
        pod
    }

    #[tokio::test]
    async fn container_events_name_their_field_and_a_full_queue_drops() {
        let (queue, mut inbox) = mpsc::channel(1);
        let sink = EventSink { queue: Some(queue) };
        let events = sink.for_pod(&pod());
        events.container("setup", EventType::Normal, "Started", "one".to_owned());
        events.container("app", EventType::Normal, "Started", "two".to_owned());
        let first = inbox.recv().await.unwrap();
        assert_eq!(first.object.namespace, "default");
        assert_eq!(
            first.object.field_path.as_deref(),
            Some("spec.initContainers{setup}")
        );
        assert!(
            inbox.try_recv().is_err(),
            "the second was dropped, not waited for"
        );
        events.container("app", EventType::Normal, "Started", "three".to_owned());
        let third = inbox.recv().await.unwrap();
        assert_eq!(
            third.object.field_path.as_deref(),
            Some("spec.containers{app}")
        );
        events.container("debug", EventType::Normal, "Started", "four".to_owned());
        let fourth = inbox.recv().await.unwrap();
        assert_eq!(
            fourth.object.field_path.as_deref(),
            Some("spec.ephemeralContainers{debug}")
        );
    }
}
