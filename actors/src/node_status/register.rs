//! Registration and status updates of the Node object: read it, create it when it is missing
//! (first start, or deleted since), and patch its status when it changed or the report period
//! passed.

use k8s_openapi::api::core::v1::{Node, NodeStatus};
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client};
use sergeant_kube_api::cached_node;

use super::error::{api_status, ApiCallError};

/// The Node named `name`, or `None` when it does not exist, read from the API server's watch
/// cache as upstream's kubelet reads it for each status update
/// ([`sergeant_kube_api::cached_node`]): the status patch that may follow merges without a
/// version, and a create that finds the Node there after all merges into it ([`register`]).
///
/// # Errors
/// [`ApiCallError`] when the API server cannot be reached or refuses the read.
pub async fn get(client: Client, name: &str) -> Result<Option<Node>, ApiCallError> {
    cached_node(client, name)
        .await
        .map_err(ApiCallError::of("get", &format!("node/{name}")))
}

/// Creates `node`; when it exists already (another incarnation registered it, or a create
/// raced), merges our labels into the one there and returns that.
///
/// # Errors
/// [`ApiCallError`] when the API server cannot be reached or refuses the create or patch.
pub async fn register(nodes: &Api<Node>, node: &Node) -> Result<Node, ApiCallError> {
    let name = node.metadata.name.clone().unwrap_or_default();
    let object = format!("node/{name}");
    match nodes.create(&PostParams::default(), node).await {
        Ok(created) => Ok(created),
        Err(err) if api_status(&err, kube::core::Status::is_already_exists) => {
            let labels = serde_json::json!({ "metadata": { "labels": node.metadata.labels } });
            nodes
                .patch(&name, &PatchParams::default(), &Patch::Merge(labels))
                .await
                .map_err(ApiCallError::of("patch labels of", &object))
        }
        Err(err) => Err(ApiCallError::of("create", &object)(err)),
    }
}

/// Patches `status` onto the Node `name` (strategic merge: conditions others own, such as
/// `NetworkUnavailable`, stay).
///
/// # Errors
/// [`ApiCallError`] when the API server cannot be reached or refuses the patch (the Node is
/// gone: `NotFound`).
pub async fn patch_status(
    nodes: &Api<Node>,
    name: &str,
    status: &NodeStatus,
) -> Result<Node, ApiCallError> {
    let patch = serde_json::json!({ "status": status });
    nodes
        .patch_status(name, &PatchParams::default(), &Patch::Strategic(patch))
        .await
        .map_err(ApiCallError::of("patch status of", &format!("node/{name}")))
}
