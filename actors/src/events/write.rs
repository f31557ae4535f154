//! The two writes of the recorder: a new `core/v1` Event in the pod's namespace, about the pod
//! (and container), from `kubelet` on this node; and the patch of a repeat's `count` and
//! `lastTimestamp`.

use std::time::SystemTime;

use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client};

use super::record::{ObjectKind, Record};
use sergeant_core::status::api_time;

/// The component that writes the events, as upstream.
const COMPONENT: &str = "kubelet";

/// Why an event was not written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventWriteError {
    /// The Event to patch is gone (expired, deleted): write it anew.
    #[error("event {name} is gone")]
    Gone {
        /// The Event's name.
        name: String,
    },
    /// The API server refused or did not answer.
    #[error("writing event {name}: {reason}")]
    Failed {
        /// The Event's name.
        name: String,
        /// What went wrong.
        reason: String,
    },
}

impl EventWriteError {
    fn of(name: &str, error: &kube::Error) -> Self {
        match error {
            kube::Error::Api(status) if status.code == 404 => Self::Gone {
                name: name.to_owned(),
            },
            _ => Self::Failed {
                name: name.to_owned(),
                reason: error.to_string(),
            },
        }
    }
}

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

/// Creates `event`.
///
/// # Errors
/// [`EventWriteError::Failed`] when the API server refused it or did not answer.
pub async fn create(client: Client, event: &Event) -> Result<(), EventWriteError> {
    let namespace = event.metadata.namespace.as_deref().unwrap_or("default");
    let name = event.metadata.name.as_deref().unwrap_or_default();
    let api: Api<Event> = Api::namespaced(client, namespace);
    api.create(&PostParams::default(), event)
        .await
        .map(drop)
        .map_err(|e| EventWriteError::of(name, &e))
}

/// Patches the repeat count, last timestamp and message of the Event `event` names.
///
/// # Errors
/// [`EventWriteError::Gone`] when it no longer exists, [`EventWriteError::Failed`] otherwise.
pub async fn patch_repeat(client: Client, event: &Event) -> Result<(), EventWriteError> {
    let namespace = event.metadata.namespace.as_deref().unwrap_or("default");
    let name = event.metadata.name.as_deref().unwrap_or_default();
    let api: Api<Event> = Api::namespaced(client, namespace);
    let body = serde_json::json!({
        "count": event.count,
        "lastTimestamp": event.last_timestamp,
        "message": event.message,
    });
    api.patch(name, &PatchParams::default(), &Patch::Merge(&body))
        .await
        .map(drop)
        .map_err(|e| EventWriteError::of(name, &e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::record::{EventType, Involved, ObjectKind};

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
