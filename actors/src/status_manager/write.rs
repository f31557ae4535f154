//! The two writes the status manager makes, both bound to the pod's UID so a pod recreated
//! with the same name is never touched: a merge patch of `status` through the `status`
//! subresource, and the final delete with grace period 0 once the pod is terminated.

use kube::api::{DeleteParams, Patch, PatchParams, Preconditions};
use kube::{Api, Client};
use sergeant_messages::pods::core::{Pod, PodStatus};
use sergeant_messages::pods::PodKey;

/// Why a write did not happen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// The pod with this UID no longer exists (404, or 409 when another pod took its name):
    /// nothing more to write.
    #[error("pod {pod} is gone: {reason}")]
    Gone {
        /// The pod.
        pod: String,
        /// The API server's answer.
        reason: String,
    },
    /// Anything else (the API server down, a timeout, a refusal): retried with back-off.
    #[error("writing pod {pod}: {reason}")]
    Failed {
        /// The pod.
        pod: String,
        /// What went wrong.
        reason: String,
    },
}

impl WriteError {
    fn of(key: &PodKey, error: &kube::Error) -> Self {
        let pod = key.to_string();
        let reason = error.to_string();
        match error {
            kube::Error::Api(status) if status.code == 404 || status.code == 409 => {
                Self::Gone { pod, reason }
            }
            _ => Self::Failed { pod, reason },
        }
    }
}

/// Patches the pod's `status` with `status`, if the pod still has the UID of `key`.
///
/// # Errors
/// [`WriteError::Gone`] when it does not exist any more, [`WriteError::Failed`] otherwise.
pub async fn patch_status(
    client: Client,
    key: &PodKey,
    status: &PodStatus,
) -> Result<(), WriteError> {
    let api: Api<Pod> = Api::namespaced(client, &key.namespace);
    // The UID in the patch is a precondition: the API server refuses to change it (409).
    let mut body = serde_json::json!({ "metadata": { "uid": key.uid }, "status": status });
    // A merge patch keeps what it leaves out: a reason and message the pod no longer has
    // (its actor was given up, and is back) are removed by name.
    for (field, value) in [("reason", &status.reason), ("message", &status.message)] {
        if value.is_none() {
            body["status"][field] = serde_json::Value::Null;
        }
    }
    api.patch_status(&key.name, &PatchParams::default(), &Patch::Merge(&body))
        .await
        .map(drop)
        .map_err(|e| WriteError::of(key, &e))
}

/// Deletes the terminated pod now (grace period 0), if it still has the UID of `key`. A pod
/// already gone counts as deleted.
///
/// # Errors
/// [`WriteError::Failed`] when the API server did not answer or refused.
pub async fn delete_pod(client: Client, key: &PodKey) -> Result<(), WriteError> {
    let api: Api<Pod> = Api::namespaced(client, &key.namespace);
    let params = DeleteParams {
        grace_period_seconds: Some(0),
        preconditions: Some(Preconditions {
            uid: Some(key.uid.clone()),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    match api.delete(&key.name, &params).await {
        Ok(_) => Ok(()),
        Err(error) => match WriteError::of(key, &error) {
            WriteError::Gone { .. } => Ok(()),
            failed @ WriteError::Failed { .. } => Err(failed),
        },
    }
}
