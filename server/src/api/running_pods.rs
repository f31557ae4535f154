//! `GET /runningpods/`: the pods the runtime is running for this node, as a PodList built
//! from the runtime's sandboxes and running containers (not from the pod specs), as upstream.

use crate::ServerDeps;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Json, Response};
use sergeant_core::labels;
use sergeant_core::stats::listing::{ready_sandboxes, running_containers};

/// The handler.
pub async fn running_pods(State(deps): State<ServerDeps>) -> Response {
    let node = match deps.config.borrow().active.node_name() {
        Ok(node) => node,
        Err(e) => return (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response(),
    };
    let (sandboxes, containers) = futures::join!(
        deps.port.call(ready_sandboxes(&node)),
        deps.port.call(running_containers(&node))
    );
    let (Ok(sandboxes), Ok(containers)) = (sandboxes, containers) else {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "the runtime did not answer\n",
        )
            .into_response();
    };
    let items: Vec<serde_json::Value> = sandboxes
        .items
        .iter()
        .map(|sandbox| {
            let label = |key: &str| sandbox.labels.get(key).cloned().unwrap_or_default();
            let running: Vec<serde_json::Value> = containers
                .containers
                .iter()
                .filter(|c| c.pod_sandbox_id == sandbox.id)
                .map(|c| {
                    serde_json::json!({
                        "name": c.labels.get(labels::CONTAINER_NAME).cloned().unwrap_or_default(),
                        "image": c.image.as_ref().map(|i| i.image.clone()).unwrap_or_default(),
                    })
                })
                .collect();
            serde_json::json!({
                "metadata": {
                    "name": label(labels::POD_NAME),
                    "namespace": label(labels::POD_NAMESPACE),
                    "uid": label(labels::POD_UID),
                },
                "spec": {"containers": running},
            })
        })
        .collect();
    Json(serde_json::json!({"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": items}))
        .into_response()
}
