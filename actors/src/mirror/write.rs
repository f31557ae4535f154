//! The mirror pod client's calls: the Node's UID (the owner of every mirror pod), creating a
//! mirror pod, and deleting one by UID.

use kube::api::{DeleteParams, PostParams, Preconditions};
use kube::{Api, Client};
use sergeant_kube_api::cached_node;
use sergeant_messages::pods::core::Pod;

use sergeant_core::source::mirror_hash;

/// Why a mirror pod call failed; the next look tries again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MirrorError {
    /// The Node is not registered yet.
    #[error("node {node} is not registered yet")]
    NoNode {
        /// The node's name.
        node: String,
    },
    /// The API server refused or did not answer.
    #[error("{what}: {reason}")]
    Failed {
        /// The call (`creating mirror pod default/web-node-a`).
        what: String,
        /// What went wrong.
        reason: String,
    },
}

/// The UID of the Node `node`, read from the API server's watch cache as upstream's kubelet
/// reads its Node ([`cached_node`]): a Node the cache does not show yet is retried.
///
/// # Errors
/// [`MirrorError::NoNode`] before it is registered, [`MirrorError::Failed`] otherwise.
pub async fn node_uid(client: Client, node: &str) -> Result<String, MirrorError> {
    let no_node = || MirrorError::NoNode {
        node: node.to_owned(),
    };
    match cached_node(client, node).await {
        Ok(found) => found
            .and_then(|found| found.metadata.uid)
            .ok_or_else(no_node),
        Err(error) => Err(MirrorError::Failed {
            what: format!("reading node {node}"),
            reason: error.to_string(),
        }),
    }
}

/// Creates `mirror`; returns it as the API server holds it. When the name is taken by the
/// very mirror pod wanted (the same static pod hash, not being deleted: made by an earlier
/// call the watch had not shown yet), that one is the answer, as upstream's mirror client
/// takes it.
///
/// # Errors
/// [`MirrorError::Failed`] when the API server refused it (another pod has the name, say).
pub async fn create(client: Client, mirror: &Pod) -> Result<Pod, MirrorError> {
    let namespace = mirror.metadata.namespace.as_deref().unwrap_or("default");
    let name = mirror.metadata.name.as_deref().unwrap_or_default();
    let failed = |reason: String| MirrorError::Failed {
        what: format!("creating mirror pod {namespace}/{name}"),
        reason,
    };
    let pods: Api<Pod> = Api::namespaced(client, namespace);
    match pods.create(&PostParams::default(), mirror).await {
        Ok(created) => Ok(created),
        Err(kube::Error::Api(status)) if status.is_already_exists() => {
            let existing = pods
                .get_opt(name)
                .await
                .map_err(|e| failed(format!("{status}; reading the pod there: {e}")))?;
            existing
                .filter(|pod| {
                    pod.metadata.deletion_timestamp.is_none()
                        && mirror_hash(pod).is_some_and(|hash| Some(hash) == mirror_hash(mirror))
                })
                .ok_or_else(|| failed(status.to_string()))
        }
        Err(error) => Err(failed(error.to_string())),
    }
}

/// Deletes the mirror pod `namespace/name` now, if it still has `uid`; one already gone is
/// fine.
///
/// # Errors
/// [`MirrorError::Failed`] when the API server refused or did not answer.
pub async fn delete(
    client: Client,
    namespace: &str,
    name: &str,
    uid: &str,
) -> Result<(), MirrorError> {
    let pods: Api<Pod> = Api::namespaced(client, namespace);
    let params = DeleteParams {
        grace_period_seconds: Some(0),
        preconditions: Some(Preconditions {
            uid: Some(uid.to_owned()),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    match pods.delete(name, &params).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => Ok(()),
        Err(error) => Err(MirrorError::Failed {
            what: format!("deleting mirror pod {namespace}/{name}"),
            reason: error.to_string(),
        }),
    }
}
