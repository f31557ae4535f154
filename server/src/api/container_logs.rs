//! `GET /containerLogs/{namespace}/{pod}/{container}`: what `kubectl logs` reads, from the
//! container's CRI log file, with `follow`, `previous`, `timestamps`, `tailLines`,
//! `limitBytes`, `sinceSeconds`/`sinceTime`.
//!
//! Entry point: [`container_logs`]. The answer is streamed a chunk at a time as the file is
//! read ([`LogFile`], [`Renderer`]), so a log of any size costs one chunk of memory.

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use sergeant_messages::runtime::cri;

use super::cri_log::Renderer;
use super::log_file::LogFile;
use super::log_query::LogQuery;
use super::target::{container_id, find, Failure};
use crate::ServerDeps;
use sergeant_actors::runtime::RuntimePort;

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
    let query = LogQuery::parse(params, SystemTime::now())
        .map_err(|e| (StatusCode::BAD_REQUEST, e.to_string()))?;
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
    let tail = query.tail_lines;
    let opened =
        tokio::task::spawn_blocking(move || LogFile::open(&path, tail).map_err(|e| (path, e)))
            .await
            .map_err(|e| {
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!("reading the log: {e}"),
                )
            })?;
    let file = opened.map_err(|(path, e)| {
        (
            StatusCode::NOT_FOUND,
            format!("log file {}: {e}", path.display()),
        )
    })?;
    let reading = Reading {
        file,
        renderer: Renderer::new(&query),
        follow: query.follow.then(|| (deps.port.clone(), id)),
    };
    let stream = futures::stream::unfold(Some(reading), |reading| async move {
        let (chunk, reading) = reading?.next().await?;
        Some((chunk, reading))
    });
    let headers = [(header::CONTENT_TYPE, "text/plain; charset=utf-8")];
    Ok((headers, Body::from_stream(stream)).into_response())
}

/// A log being read for a request: the file, the renderer, and for a followed log the
/// container whose running keeps it going.
struct Reading {
    file: LogFile,
    renderer: Renderer,
    follow: Option<(RuntimePort, String)>,
}

impl Reading {
    /// The next chunk of the answer, and what is left to read (none after an error); `None`
    /// at the end: the limit reached, the end of the file, or for a followed log the end of
    /// the file once the container stopped.
    async fn next(mut self) -> Option<(io::Result<Bytes>, Option<Self>)> {
        loop {
            if self.renderer.full() {
                return None;
            }
            let (result, back) = tokio::task::spawn_blocking(move || {
                let result = self.read_some();
                (result, self)
            })
            .await
            .ok()?;
            self = back;
            match result {
                Ok(Some(chunk)) => return Some((Ok(Bytes::from(chunk)), Some(self))),
                Ok(None) => {}
                Err(e) => return Some((Err(e), None)),
            }
            let (port, id) = self.follow.as_ref()?;
            if !running(port, id).await {
                return None;
            }
            tokio::time::sleep(FOLLOW_POLL).await;
        }
    }

    /// Reads until something is rendered: `None` at the end of the file (after looking for a
    /// rotation when following).
    fn read_some(&mut self) -> io::Result<Option<Vec<u8>>> {
        let mut out = Vec::new();
        while out.is_empty() && !self.renderer.full() {
            if self.file.read(&mut self.renderer, &mut out)? == 0
                && !(self.follow.is_some() && self.file.follow_rotation(&mut self.renderer)?)
            {
                break;
            }
        }
        Ok((!out.is_empty()).then_some(out))
    }
}

/// Whether the container `id` is running.
async fn running(port: &RuntimePort, id: &str) -> bool {
    port.call(cri::ContainerStatusRequest {
        container_id: id.to_owned(),
        verbose: false,
    })
    .await
    .ok()
    .and_then(|s| s.status)
    .is_some_and(|s| s.state == cri::ContainerState::ContainerRunning as i32)
}
