//! The node's own Node object, read as upstream's kubelet reads it: from the API server's watch
//! cache (`resourceVersion=0`), not as a quorum read of etcd. Entry point: [`cached_node`].

use k8s_openapi::api::core::v1::Node;
use kube::api::GetParams;
use kube::{Api, Client};

/// The Node `name` as the API server's watch cache holds it, or `None` when the cache has no
/// such Node (not registered yet, or not seen by the cache yet: a caller that creates it merges
/// into one that exists after all; one that needs it retries).
///
/// # Errors
/// The API server's or the connection's error, a missing Node aside.
pub async fn cached_node(client: Client, name: &str) -> Result<Option<Node>, kube::Error> {
    let nodes: Api<Node> = Api::all(client);
    match nodes.get_with(name, &GetParams::any()).await {
        Ok(node) => Ok(Some(node)),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(None),
        Err(err) => Err(err),
    }
}
