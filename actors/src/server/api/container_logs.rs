//! `GET /containerLogs/{namespace}/{pod}/{container}`: what `kubectl logs` reads, from the
//! container's CRI log file, with `follow`, `previous`, `timestamps`, `tailLines`,
//! `limitBytes`, `sinceSeconds`/`sinceTime`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use sergeant_messages::runtime::cri;

use super::cri_log;
use super::log_query::LogQuery;
use super::target::{container_id, find, Failure};
use crate::runtime::RuntimePort;
use crate::server::ServerDeps;

/// How often a followed log is checked for new lines.
const FOLLOW_POLL: Duration = Duration::from_millis(200);

/// The handler.
pub async fn container_logs(
    State(deps): State<ServerDeps>,
    Path((namespace, pod, container)): Path<(String, String, String)>,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    match answer(&deps, &namespace, &pod, &container, &params).await {
        Ok(response) => response,
        Err((status, message)) => (status, format!("{message}\n")).into_response(),
    }
}

async fn answer(
    deps: &ServerDeps,
    namespace: &str,
    pod: &str,
    container: &str,
    params: &HashMap<String, String>,
) -> Result<Response, Failure> {
    let query = LogQuery::parse(params).map_err(|e| (StatusCode::BAD_REQUEST, e))?;
    let named = find(deps, namespace, pod, container).await?;
    let id = container_id(&named, container, query.previous)?;
    let status = deps
        .port
        .call(cri::ContainerStatusRequest {
            container_id: id.clone(),
            verbose: false,
        })
        .await
        .map_err(|e| (StatusCode::NOT_FOUND, format!("container {id}: {e}")))?
        .status
        .ok_or_else(|| (StatusCode::NOT_FOUND, format!("container {id}: no status")))?;
    let path = PathBuf::from(&status.log_path);
    let text = read(&path).await?;
    let first = cri_log::render(&cri_log::parse(&text), &query);
    let headers = [(header::CONTENT_TYPE, "text/plain; charset=utf-8")];
    if !query.follow {
        return Ok((headers, first).into_response());
    }
    let follow = Follow {
        port: deps.port.clone(),
        id,
        path,
        offset: text.len(),
        timestamps: query.timestamps,
        left: query.limit_bytes.map(|l| l.saturating_sub(first.len())),
        first: Some(Bytes::from(first)),
    };
    let stream = futures::stream::unfold(follow, Follow::next);
    Ok((headers, Body::from_stream(stream)).into_response())
}

async fn read(path: &std::path::Path) -> Result<String, Failure> {
    tokio::fs::read(path)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .map_err(|e| {
            (
                StatusCode::NOT_FOUND,
                format!("log file {}: {e}", path.display()),
            )
        })
}

/// A followed log: what was sent and what is left.
struct Follow {
    port: RuntimePort,
    id: String,
    path: PathBuf,
    offset: usize,
    timestamps: bool,
    left: Option<usize>,
    first: Option<Bytes>,
}

impl Follow {
    /// The next chunk: what the file gained, once there is some; the end when the limit is
    /// reached or the container stopped and everything was sent.
    async fn next(mut self) -> Option<(Result<Bytes, std::io::Error>, Self)> {
        if let Some(first) = self.first.take() {
            return Some((Ok(first), self));
        }
        loop {
            if self.left == Some(0) {
                return None;
            }
            let text = read(&self.path).await.unwrap_or_default();
            if text.len() < self.offset {
                // Rotated: the runtime writes a fresh file.
                self.offset = 0;
            }
            let complete = text[self.offset..].rfind('\n').map(|i| self.offset + i + 1);
            if let Some(end) = complete {
                let query = LogQuery {
                    timestamps: self.timestamps,
                    limit_bytes: self.left,
                    ..LogQuery::default()
                };
                let chunk = cri_log::render(&cri_log::parse(&text[self.offset..end]), &query);
                self.offset = end;
                self.left = self.left.map(|l| l.saturating_sub(chunk.len()));
                if !chunk.is_empty() {
                    return Some((Ok(Bytes::from(chunk)), self));
                }
            }
            if !self.running().await {
                return None;
            }
            tokio::time::sleep(FOLLOW_POLL).await;
        }
    }

    async fn running(&self) -> bool {
        self.port
            .call(cri::ContainerStatusRequest {
                container_id: self.id.clone(),
                verbose: false,
            })
            .await
            .ok()
            .and_then(|s| s.status)
            .is_some_and(|s| s.state == cri::ContainerState::ContainerRunning as i32)
    }
}
