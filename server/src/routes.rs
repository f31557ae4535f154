//! The HTTP routes of the healthz, read-only and authenticated listeners.
//!
//! Entry point: [`router`].

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use sergeant_messages::pods::core::Pod;
use sergeant_messages::pods::SourceSnapshot;
use sergeant_messages::supervision::{GetTree, TreeNode};

use sergeant_actors::pod_manager::ListPods;
use sergeant_supervisor::failpoint;

use super::api;
use super::exposition::families_with_prefix;
use super::healthz::healthz;
use super::ServerDeps;

/// Which set of endpoints a listener serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoints {
    /// `/healthz` only.
    Healthz,
    /// The unauthenticated read-only endpoints.
    ReadOnly,
    /// The endpoints of the authenticated API (the read-only ones and `/configz`); the caller
    /// puts authentication and authorization in front.
    Authenticated,
}

impl Endpoints {
    /// The `server_type` label of the listener's metrics: upstream's `readonly` and
    /// `readwrite`, and `healthz`.
    #[must_use]
    pub fn server_type(self) -> &'static str {
        match self {
            Self::Healthz => "healthz",
            Self::ReadOnly => "readonly",
            Self::Authenticated => "readwrite",
        }
    }

    /// The name of the listener serving these endpoints in the supervision tree.
    #[must_use]
    pub fn listener_name(self) -> &'static str {
        match self {
            Self::Healthz => "healthz",
            Self::ReadOnly => "read-only",
            Self::Authenticated => "kubelet-api",
        }
    }
}

/// The first segments of the paths the routes serve: the buckets requests are counted in, as
/// upstream's `getMetricBucket`, so that a client cannot make up label values.
const PATH_ROOTS: [&str; 12] = [
    "healthz",
    "metrics",
    "pods",
    "debug",
    "stats",
    "configz",
    "containerLogs",
    "run",
    "runningpods",
    "exec",
    "attach",
    "portForward",
];

/// The metrics bucket of a request for `path`: its first segment when a route serves it,
/// `other` for anything else.
#[must_use]
pub fn path_bucket(path: &str) -> &'static str {
    let root = path
        .trim_start_matches('/')
        .split('/')
        .next()
        .unwrap_or_default();
    PATH_ROOTS
        .iter()
        .find(|known| **known == root)
        .copied()
        .unwrap_or("other")
}

/// The routes of `endpoints`.
pub(super) fn router(endpoints: Endpoints, deps: ServerDeps) -> Router {
    let read_only = || {
        Router::new()
            .route("/healthz", get(healthz))
            .route("/metrics", get(metrics))
            .route("/metrics/probes", get(probe_metrics))
            .route("/pods", get(pods))
            .route("/debug/supervision", get(supervision))
            .route("/debug/config", get(config))
            .route("/debug/sources", get(sources))
            .merge(api::stats_routes())
    };
    match endpoints {
        Endpoints::Healthz => Router::new().route("/healthz", get(healthz)),
        Endpoints::ReadOnly => read_only(),
        Endpoints::Authenticated => read_only()
            .route("/configz", get(configz))
            .route(
                "/containerLogs/{namespace}/{pod}/{container}",
                get(api::container_logs),
            )
            .route("/run/{namespace}/{pod}/{container}", post(api::run))
            .route("/runningpods/", get(api::running_pods))
            .route(
                "/exec/{namespace}/{pod}/{container}",
                get(api::exec).post(api::exec),
            )
            .route(
                "/attach/{namespace}/{pod}/{container}",
                get(api::attach).post(api::attach),
            )
            .route(
                "/portForward/{namespace}/{pod}",
                get(api::port_forward).post(api::port_forward),
            ),
    }
    .with_state(deps)
}

async fn tree(deps: &ServerDeps, ask: GetTree) -> Result<TreeNode, Response> {
    deps.root.send(ask).await.map_err(|err| {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("supervision tree unavailable: {err}\n"),
        )
            .into_response()
    })
}

async fn supervision(State(deps): State<ServerDeps>) -> Response {
    match tree(&deps, GetTree::default()).await {
        Ok(tree) => Json(tree).into_response(),
        Err(response) => response,
    }
}

async fn config(State(deps): State<ServerDeps>) -> Response {
    let state = deps.config.borrow().clone();
    Json(state).into_response()
}

/// `/configz`: the KubeletConfiguration in force, under `kubeletconfig`, as upstream.
async fn configz(State(deps): State<ServerDeps>) -> Response {
    let active = deps.config.borrow().active.clone();
    Json(serde_json::json!({ "kubeletconfig": active.kubelet })).into_response()
}

async fn metrics(State(deps): State<ServerDeps>) -> Response {
    deps.metrics.run_upkeep();
    exposition(deps.metrics.render())
}

/// `/metrics/probes`: only the prober families, as upstream serves them apart.
async fn probe_metrics(State(deps): State<ServerDeps>) -> Response {
    deps.metrics.run_upkeep();
    exposition(families_with_prefix(&deps.metrics.render(), "prober_"))
}

fn exposition(text: String) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

async fn pods(State(deps): State<ServerDeps>) -> Response {
    if let Err(fault) = failpoint::check("server::handler") {
        return (StatusCode::INTERNAL_SERVER_ERROR, format!("{fault}\n")).into_response();
    }
    match deps.pods.send(ListPods).await {
        Ok(pods) => {
            let items: Vec<&Pod> = pods.iter().map(AsRef::as_ref).collect();
            Json(serde_json::json!({"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": items})).into_response()
        }
        Err(err) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("pod manager unavailable: {err}\n"),
        )
            .into_response(),
    }
}

async fn sources(State(deps): State<ServerDeps>) -> Response {
    let file = source_view(&deps.file_source.borrow());
    let api = source_view(&deps.api_source.borrow());
    Json(serde_json::json!({"file": file, "api": api})).into_response()
}

/// One source's view on `/debug/sources`: synced, its pods by `namespace/name`, rejections.
fn source_view(snapshot: &SourceSnapshot) -> serde_json::Value {
    let pods: Vec<String> = snapshot
        .pods
        .iter()
        .map(|p| {
            format!(
                "{}/{}",
                p.metadata.namespace.as_deref().unwrap_or_default(),
                p.metadata.name.as_deref().unwrap_or_default()
            )
        })
        .collect();
    serde_json::json!({"synced": snapshot.synced, "pods": pods, "rejected": snapshot.rejected})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_counted_by_their_served_root_and_anything_else_as_other() {
        assert_eq!(path_bucket("/pods"), "pods");
        assert_eq!(path_bucket("/containerLogs/ns/pod/c"), "containerLogs");
        assert_eq!(path_bucket("/metrics/probes"), "metrics");
        assert_eq!(path_bucket("/made-up-by-a-client-1234"), "other");
        assert_eq!(path_bucket("/"), "other");
        assert_eq!(path_bucket(""), "other");
    }
}
