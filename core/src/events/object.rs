//! The `core/v1` Event object of one event: in the pod's namespace (`default` for the node's),
//! about the pod (and container) or the node, from `kubelet` on this node, as upstream's
//! recorder writes it. The event-recorder actor creates it through the API.

use std::time::SystemTime;

use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::record::{ObjectKind, Record};
use crate::status::api_time;

/// The component that writes the events, as upstream.
const COMPONENT: &str = "kubelet";

/// One Event to write: the record, under `name`, with `message`, seen `count` times since
/// `first`.
pub struct NewEvent<'a> {
    /// What happened.
    pub record: &'a Record,
    /// The Event's name.
    pub name: &'a str,
    /// Its message (the record's, or a combined one).
    pub message: &'a str,
    /// How many times it happened.
    pub count: i32,
    /// When it first happened.
    pub first: SystemTime,
}

/// The Event object for `new`, reported by the kubelet of `node`.
#[must_use]
pub fn event(new: &NewEvent<'_>, node: &str) -> Event {
    let object = &new.record.object;
    Event {
        metadata: ObjectMeta {
            name: Some(new.name.to_owned()),
            namespace: Some(object.namespace.clone()),
            ..ObjectMeta::default()
        },
        involved_object: ObjectReference {
            api_version: Some("v1".to_owned()),
            kind: Some(object.kind.as_str().to_owned()),
            namespace: (object.kind == ObjectKind::Pod).then(|| object.namespace.clone()),
            name: Some(object.name.clone()),
            uid: Some(object.uid.clone()),
            field_path: object.field_path.clone(),
            ..ObjectReference::default()
        },
        reason: Some(new.record.reason.to_owned()),
        message: Some(new.message.to_owned()),
        type_: Some(new.record.kind.as_str().to_owned()),
        source: Some(EventSource {
            component: Some(COMPONENT.to_owned()),
            host: Some(node.to_owned()),
        }),
        first_timestamp: Some(api_time(new.first)),
        last_timestamp: Some(api_time(new.record.at)),
        count: Some(new.count),
        reporting_component: Some(COMPONENT.to_owned()),
        reporting_instance: Some(node.to_owned()),
        ..Event::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::record::{EventType, Involved};

    #[test]
    fn the_event_names_the_pod_container_and_node() {
        let record = Record {
            object: Involved {
                kind: ObjectKind::Pod,
                namespace: "team".to_owned(),
                name: "web".to_owned(),
                uid: "u1".to_owned(),
                field_path: Some("spec.containers{app}".to_owned()),
            },
            kind: EventType::Normal,
            reason: "Started",
            message: "Started container app".to_owned(),
            at: SystemTime::now(),
        };
        let new = NewEvent {
            record: &record,
            name: "web.1",
            message: &record.message,
            count: 3,
            first: record.at,
        };
        let json = serde_json::to_value(event(&new, "node-a")).unwrap();
        assert_eq!(json["metadata"]["namespace"], "team");
        assert_eq!(json["involvedObject"]["kind"], "Pod");
        assert_eq!(json["involvedObject"]["uid"], "u1");
        assert_eq!(json["involvedObject"]["fieldPath"], "spec.containers{app}");
        assert_eq!(json["source"]["component"], "kubelet");
        assert_eq!(json["source"]["host"], "node-a");
        assert_eq!(json["reportingComponent"], "kubelet");
        assert_eq!(json["reportingInstance"], "node-a");
        assert_eq!(
            (json["type"].as_str(), json["count"].as_i64()),
            (Some("Normal"), Some(3))
        );
    }

    #[test]
    fn a_node_event_names_the_node_and_is_written_to_default() {
        let record = Record {
            object: Involved {
                kind: ObjectKind::Node,
                namespace: "default".to_owned(),
                name: "node-a".to_owned(),
                uid: "node-a".to_owned(),
                field_path: None,
            },
            kind: EventType::Warning,
            reason: "FreeDiskSpaceFailed",
            message: "short".to_owned(),
            at: SystemTime::now(),
        };
        let new = NewEvent {
            record: &record,
            name: "node-a.1",
            message: &record.message,
            count: 1,
            first: record.at,
        };
        let json = serde_json::to_value(event(&new, "node-a")).unwrap();
        assert_eq!(json["metadata"]["namespace"], "default");
        assert_eq!(json["involvedObject"]["kind"], "Node");
        assert_eq!(json["involvedObject"]["name"], "node-a");
        assert!(json["involvedObject"].get("namespace").is_none());
    }
}
