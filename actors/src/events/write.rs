//! The two writes of the recorder: a new `core/v1` Event (as `sergeant_core::events::object`
//! makes it); and the patch of a repeat's `count` and `lastTimestamp`.

use k8s_openapi::api::core::v1::Event;
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client};

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
