//! `/exec`, `/attach` and `/portForward`: the runtime is asked for a streaming URL (CRI
//! `Exec`, `Attach`, `PortForward`) and the client's upgraded connection — SPDY or WebSocket,
//! whatever it speaks — is proxied to it byte for byte, as upstream's kubelet does.

use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, Query, Request, State};
use axum::http::{header, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::rt::TokioIo;
use sergeant_messages::runtime::cri;
use tokio::net::TcpStream;

use super::target::{container_id, current_container_id, find, find_pod, Failure};
use crate::ServerDeps;
use sergeant_actors::pod::observe::observe;

/// How long the runtime's streaming server may take to answer an exec, attach or
/// port-forward request: to accept the connection and send a response head (and the body of
/// a refusal). containerd answers at once; a runtime that does not is not waited for with the
/// client's connection held.
const RUNTIME_ANSWER_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest refusal (an answer other than `101 Switching Protocols`) of the runtime's
/// streaming server passed on: an error message, not a stream.
const MAX_RUNTIME_REFUSAL_BYTES: usize = 64 * 1024;

/// The query of exec and attach: `command` (repeated), `stdin`, `stdout`, `stderr`, `tty`.
struct StreamQuery {
    command: Vec<String>,
    stdin: bool,
    stdout: bool,
    stderr: bool,
    tty: bool,
}

impl StreamQuery {
    fn parse(pairs: &[(String, String)]) -> Result<Self, Failure> {
        let flag = |name: &str| {
            pairs
                .iter()
                .any(|(k, v)| k == name && matches!(v.as_str(), "1" | "true" | ""))
        };
        let query = Self {
            command: pairs
                .iter()
                .filter(|(k, _)| k == "command")
                .map(|(_, v)| v.clone())
                .collect(),
            stdin: flag("stdin") || flag("input"),
            stdout: flag("stdout") || flag("output"),
            stderr: flag("stderr") || flag("error"),
            tty: flag("tty"),
        };
        if !(query.stdin || query.stdout || query.stderr) {
            return Err((
                StatusCode::BAD_REQUEST,
                "you must specify at least 1 of stdin, stdout, stderr".to_owned(),
            ));
        }
        Ok(query)
    }
}

/// `/exec/{namespace}/{pod}/{container}?command=...`.
pub async fn exec(
    State(deps): State<ServerDeps>,
    Path((namespace, pod, container)): Path<(String, String, String)>,
    Query(pairs): Query<Vec<(String, String)>>,
    request: Request,
) -> Response {
    let url = async {
        let query = StreamQuery::parse(&pairs)?;
        if query.command.is_empty() {
            return Err((
                StatusCode::BAD_REQUEST,
                "command: a command is required".to_owned(),
            ));
        }
        let id = current_container_id(&deps, &namespace, &pod, &container).await?;
        let answer = deps
            .port
            .call(cri::ExecRequest {
                container_id: id,
                cmd: query.command,
                tty: query.tty,
                stdin: query.stdin,
                stdout: query.stdout,
                stderr: query.stderr && !query.tty,
            })
            .await
            .map_err(runtime_failure)?;
        Ok(answer.url)
    };
    respond(url.await, request).await
}

/// `/attach/{namespace}/{pod}/{container}`: the container's own streams. As upstream, `tty`
/// is the container's (a running process's terminal cannot change), whatever the query says;
/// input is refused for a container created without `stdin: true`, which has none to take it.
pub async fn attach(
    State(deps): State<ServerDeps>,
    Path((namespace, pod, container)): Path<(String, String, String)>,
    Query(pairs): Query<Vec<(String, String)>>,
    request: Request,
) -> Response {
    let url = async {
        let query = StreamQuery::parse(&pairs)?;
        let named = find(&deps, &namespace, &pod, &container).await?;
        let has_stdin = named.spec.stdin.unwrap_or(false);
        let tty = named.spec.tty.unwrap_or(false);
        if query.stdin && !has_stdin {
            return Err((
                StatusCode::BAD_REQUEST,
                format!(
                    "container {container:?} in pod {namespace}/{pod} was not created with \
                     stdin: true, so there is no input to attach to; attach without stdin, or \
                     set stdin: true in the container's spec"
                ),
            ));
        }
        let id = container_id(&named, &container, false)?;
        tracing::info!(%namespace, %pod, %container, %id, stdin = query.stdin, tty, "attach");
        let answer = deps
            .port
            .call(cri::AttachRequest {
                container_id: id,
                stdin: query.stdin,
                tty,
                stdout: query.stdout,
                stderr: query.stderr && !tty,
            })
            .await
            .map_err(runtime_failure)?;
        Ok(answer.url)
    };
    respond(url.await, request).await
}

/// `/portForward/{namespace}/{pod}`.
pub async fn port_forward(
    State(deps): State<ServerDeps>,
    Path((namespace, pod)): Path<(String, String)>,
    request: Request,
) -> Response {
    let url = async {
        let uid = find_pod(&deps, &namespace, &pod)
            .await?
            .metadata
            .uid
            .clone()
            .ok_or_else(|| {
                (
                    StatusCode::NOT_FOUND,
                    format!("pod {namespace}/{pod} not found"),
                )
            })?;
        let runtime = observe(&deps.port, &uid).await.map_err(runtime_failure)?;
        let sandbox = runtime.ready_sandbox().ok_or_else(|| {
            (
                StatusCode::BAD_REQUEST,
                format!("pod {namespace}/{pod} has no running sandbox"),
            )
        })?;
        let answer = deps
            .port
            .call(cri::PortForwardRequest {
                pod_sandbox_id: sandbox.id.clone(),
                port: Vec::new(),
            })
            .await
            .map_err(runtime_failure)?;
        Ok(answer.url)
    };
    respond(url.await, request).await
}

fn runtime_failure(error: sergeant_messages::runtime_error::RuntimeError) -> Failure {
    (StatusCode::INTERNAL_SERVER_ERROR, error.to_string())
}

async fn respond(url: Result<String, Failure>, request: Request) -> Response {
    match url {
        Ok(url) => proxy(&url, request)
            .await
            .unwrap_or_else(|(status, message)| (status, format!("{message}\n")).into_response()),
        Err((status, message)) => (status, format!("{message}\n")).into_response(),
    }
}

/// Sends `request` (its method and upgrade headers) to the runtime's streaming `url`; on
/// `101 Switching Protocols` joins the two upgraded connections. The runtime has
/// [`RUNTIME_ANSWER_TIMEOUT`] to answer; the stream that follows has no deadline.
async fn proxy(url: &str, request: Request) -> Result<Response, Failure> {
    tokio::time::timeout(RUNTIME_ANSWER_TIMEOUT, exchange(url, request))
        .await
        .unwrap_or_else(|_| {
            Err((
                StatusCode::GATEWAY_TIMEOUT,
                format!(
                    "the runtime's streaming server at {url} did not answer within \
                     {RUNTIME_ANSWER_TIMEOUT:?}"
                ),
            ))
        })
}

/// The exchange of [`proxy`], up to the runtime's answer.
async fn exchange(url: &str, mut request: Request) -> Result<Response, Failure> {
    let bad_gateway = |what: &str, e: &dyn std::fmt::Display| {
        (
            StatusCode::BAD_GATEWAY,
            format!("the runtime's streaming server at {url}: {what}: {e}"),
        )
    };
    let target: Uri = url.parse().map_err(|e| bad_gateway("bad URL", &e))?;
    let authority = target
        .authority()
        .ok_or_else(|| bad_gateway("no host", &"-"))?
        .to_string();
    let tcp = TcpStream::connect(&authority)
        .await
        .map_err(|e| bad_gateway("connect", &e))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .map_err(|e| bad_gateway("handshake", &e))?;
    tokio::spawn(async move {
        // Ends with the exchange or the upgraded stream.
        let _ = connection.with_upgrades().await;
    });
    let mut backend = hyper::Request::builder()
        .method(request.method().clone())
        .uri(target.path_and_query().map_or("/", |p| p.as_str()))
        .header(header::HOST, authority.as_str());
    for (name, value) in request.headers() {
        if name != header::HOST && name != header::AUTHORIZATION {
            backend = backend.header(name, value);
        }
    }
    let backend = backend
        .body(Empty::<Bytes>::new())
        .map_err(|e| bad_gateway("request", &e))?;
    let client_upgrade = hyper::upgrade::on(&mut request);
    let mut response = sender
        .send_request(backend)
        .await
        .map_err(|e| bad_gateway("request", &e))?;
    let status = response.status();
    let headers = response.headers().clone();
    if status != StatusCode::SWITCHING_PROTOCOLS {
        let body = Limited::new(response.into_body(), MAX_RUNTIME_REFUSAL_BYTES)
            .collect()
            .await
            .map(|b| b.to_bytes())
            .map_err(|e| bad_gateway("its answer", &e))?;
        let mut answer = (status, body).into_response();
        answer.headers_mut().extend(headers);
        return Ok(answer);
    }
    let backend_upgrade = hyper::upgrade::on(&mut response);
    tokio::spawn(async move {
        match tokio::join!(client_upgrade, backend_upgrade) {
            (Ok(client), Ok(backend)) => {
                let (mut client, mut backend) = (TokioIo::new(client), TokioIo::new(backend));
                let _ = tokio::io::copy_bidirectional(&mut client, &mut backend).await;
            }
            (client, backend) => tracing::debug!(
                "stream not joined: client {:?}, runtime {:?}",
                client.err(),
                backend.err()
            ),
        }
    });
    let mut answer = Response::new(Body::empty());
    *answer.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    *answer.headers_mut() = headers;
    Ok(answer)
}
