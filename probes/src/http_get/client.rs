//! One HTTP GET with a deadline over HTTP/1.1 (plain or TLS), following redirects that stay on
//! the same host, as upstream's hooks and probes do.

use std::io;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::rustls::pki_types::ServerName;

use super::target::HttpTarget;
use super::tls;

/// Redirects followed before giving up, as upstream (Go's client default).
const MAX_REDIRECTS: usize = 10;
/// How much of the body is kept for the probe's output.
const BODY_LIMIT: usize = 10 * 1024;

/// What the server answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpAnswer {
    /// The status code of the last response.
    pub status: u16,
    /// The start of its body (at most 10 KiB), for messages.
    pub body: String,
    /// A redirect to another host that was not followed; upstream probes count it a success
    /// with a warning.
    pub redirect_not_followed: Option<String>,
}

/// Why no answer came.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpGetError {
    /// The deadline passed first.
    #[error("Get {url:?}: context deadline exceeded (timeout {after:?})")]
    Timeout {
        /// The URL asked.
        url: String,
        /// The deadline.
        after: Duration,
    },
    /// Connecting, the TLS handshake or the exchange failed.
    #[error("Get {url:?}: {reason}")]
    Failed {
        /// The URL asked.
        url: String,
        /// What went wrong.
        reason: ExchangeError,
    },
    /// The server kept redirecting.
    #[error("Get {url:?}: stopped after {MAX_REDIRECTS} redirects")]
    TooManyRedirects {
        /// The last URL asked.
        url: String,
    },
}

/// Why one request on a fresh connection got no response: the step that failed (connecting,
/// TLS, the HTTP exchange) and the library's words, which the probe's or hook's message keeps.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExchangeError {
    /// The TCP connection could not be made.
    #[error("dial tcp {authority}: {message}")]
    Dial {
        /// `host:port`.
        authority: String,
        /// The operating system's error kind (refused, unreachable, …).
        kind: io::ErrorKind,
        /// Its text.
        message: String,
    },
    /// The host is not a name TLS can be asked for.
    #[error("TLS server name {host:?}: {message}")]
    ServerName {
        /// The host.
        host: String,
        /// Why it is not one.
        message: String,
    },
    /// The shared TLS client could not be set up.
    #[error(transparent)]
    TlsClient(#[from] tls::TlsClientError),
    /// The TLS handshake failed.
    #[error("TLS handshake with {authority}: {message}")]
    Handshake {
        /// `host:port`.
        authority: String,
        /// The error kind of the handshake's failure.
        kind: io::ErrorKind,
        /// Its text.
        message: String,
    },
    /// The request could not be built (a header the action gives is not valid HTTP).
    #[error("invalid request: {0}")]
    Request(String),
    /// The HTTP exchange failed (the connection closed, a malformed response).
    #[error("{0}")]
    Http(String),
}

impl HttpTarget {
    /// The URL, for messages.
    #[must_use]
    pub fn url(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://{}{}", self.authority(), self.path)
    }
}

/// GETs `target` within `timeout`, following same-host redirects.
///
/// # Errors
/// [`HttpGetError`] when no response came in time or the exchange failed.
pub async fn get(target: &HttpTarget, timeout: Duration) -> Result<HttpAnswer, HttpGetError> {
    let url = target.url();
    tokio::time::timeout(timeout, follow(target.clone()))
        .await
        .unwrap_or(Err(HttpGetError::Timeout {
            url,
            after: timeout,
        }))
}

async fn follow(mut target: HttpTarget) -> Result<HttpAnswer, HttpGetError> {
    let first_host = target.host.clone();
    for _ in 0..=MAX_REDIRECTS {
        let response = exchange(&target)
            .await
            .map_err(|reason| HttpGetError::Failed {
                url: target.url(),
                reason,
            })?;
        let Some(next) = redirect(&target, &response) else {
            return Ok(HttpAnswer {
                status: response.status().as_u16(),
                body: read_body(response).await,
                redirect_not_followed: None,
            });
        };
        if !next.host.eq_ignore_ascii_case(&first_host) {
            return Ok(HttpAnswer {
                status: response.status().as_u16(),
                body: read_body(response).await,
                redirect_not_followed: Some(next.url()),
            });
        }
        target = next;
    }
    Err(HttpGetError::TooManyRedirects { url: target.url() })
}

/// Where a redirect response points, resolved against `target`.
fn redirect(target: &HttpTarget, response: &Response<Incoming>) -> Option<HttpTarget> {
    if !matches!(
        response.status(),
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    ) {
        return None;
    }
    let location: Uri = response
        .headers()
        .get(hyper::header::LOCATION)?
        .to_str()
        .ok()?
        .parse()
        .ok()?;
    let mut next = target.clone();
    if let Some(authority) = location.authority() {
        next.https = location.scheme_str() == Some("https");
        next.host = authority.host().trim_matches(['[', ']']).to_owned();
        next.port = authority
            .port_u16()
            .unwrap_or(if next.https { 443 } else { 80 });
    }
    next.path = location
        .path_and_query()
        .map_or_else(|| "/".to_owned(), ToString::to_string);
    if !next.path.starts_with('/') {
        next.path = format!("/{}", next.path);
    }
    Some(next)
}

/// One request on a fresh connection.
async fn exchange(target: &HttpTarget) -> Result<Response<Incoming>, ExchangeError> {
    let tcp = TcpStream::connect((target.host.as_str(), target.port))
        .await
        .map_err(|e| ExchangeError::Dial {
            authority: target.authority(),
            kind: e.kind(),
            message: e.to_string(),
        })?;
    let request = request(target)?;
    if !target.https {
        return send(tcp, request).await;
    }
    let name =
        ServerName::try_from(target.host.clone()).map_err(|e| ExchangeError::ServerName {
            host: target.host.clone(),
            message: e.to_string(),
        })?;
    let tls = tls::connector()?
        .connect(name, tcp)
        .await
        .map_err(|e| ExchangeError::Handshake {
            authority: target.authority(),
            kind: e.kind(),
            message: e.to_string(),
        })?;
    send(tls, request).await
}

fn request(target: &HttpTarget) -> Result<Request<Empty<Bytes>>, ExchangeError> {
    let mut builder = Request::get(target.path.as_str()).header("Host", target.host_header());
    for (name, value) in &target.headers {
        if !name.eq_ignore_ascii_case("host") {
            builder = builder.header(name.as_str(), value.as_str());
        }
    }
    builder
        .body(Empty::new())
        .map_err(|e| ExchangeError::Request(e.to_string()))
}

async fn send<IO>(
    io: IO,
    request: Request<Empty<Bytes>>,
) -> Result<Response<Incoming>, ExchangeError>
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let failed = |e: hyper::Error| ExchangeError::Http(e.to_string());
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(failed)?;
    tokio::spawn(async move {
        // The connection ends with the exchange; its outcome is the response's.
        let _ = connection.await;
    });
    sender.send_request(request).await.map_err(failed)
}

/// The first [`BODY_LIMIT`] bytes of the body, as text; the rest is dropped with the
/// connection.
async fn read_body(response: Response<Incoming>) -> String {
    let mut body = response.into_body();
    let mut kept = Vec::new();
    while kept.len() < BODY_LIMIT {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    kept.extend_from_slice(&data);
                }
            }
            Some(Err(_)) | None => break,
        }
    }
    kept.truncate(BODY_LIMIT);
    String::from_utf8_lossy(&kept).into_owned()
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use axum::http::header::LOCATION;
    use axum::response::IntoResponse;
    use axum::routing::get as route;
    use axum::Router;

    use super::*;

    /// A real HTTP server on loopback with the answers the tests need.
    async fn server() -> SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let port = addr.port();
        let app = Router::new()
            .route("/ok", route(|| async { "fine" }))
            .route(
                "/teapot",
                route(|| async { (StatusCode::IM_A_TEAPOT, "short and stout") }),
            )
            .route(
                "/hop",
                route(|| async { (StatusCode::FOUND, [(LOCATION, "/ok")]).into_response() }),
            )
            .route(
                "/away",
                route(move || async move {
                    let elsewhere = format!("http://127.0.0.2:{port}/ok");
                    (StatusCode::FOUND, [(LOCATION, elsewhere)]).into_response()
                }),
            )
            .route(
                "/loop",
                route(|| async { (StatusCode::FOUND, [(LOCATION, "/loop")]).into_response() }),
            )
            .route(
                "/agent",
                route(|headers: axum::http::HeaderMap| async move {
                    format!("{:?}", headers.get("user-agent"))
                }),
            )
            .route("/big", route(|| async { "x".repeat(3 * BODY_LIMIT) }))
            .route(
                "/slow",
                route(|| async {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    "late"
                }),
            );
        tokio::spawn(async move { axum::serve(listener, app).await });
        addr
    }

    fn target(addr: SocketAddr, path: &str) -> HttpTarget {
        HttpTarget {
            https: false,
            host: addr.ip().to_string(),
            port: addr.port(),
            path: path.to_owned(),
            headers: vec![("User-Agent".into(), "kube-probe/1.37".into())],
        }
    }

    const SOON: Duration = Duration::from_secs(3);

    #[tokio::test]
    async fn answers_carry_the_status_and_the_body() {
        let addr = server().await;
        let ok = get(&target(addr, "/ok"), SOON).await.unwrap();
        assert_eq!((ok.status, ok.body.as_str()), (200, "fine"));
        let teapot = get(&target(addr, "/teapot"), SOON).await.unwrap();
        assert_eq!(teapot.status, 418);
        let agent = get(&target(addr, "/agent"), SOON).await.unwrap();
        assert_eq!(agent.body, "Some(\"kube-probe/1.37\")");
        let big = get(&target(addr, "/big"), SOON).await.unwrap();
        assert_eq!(big.body.len(), BODY_LIMIT);
    }

    #[tokio::test]
    async fn redirects_are_followed_on_the_same_host_only() {
        let addr = server().await;
        let hop = get(&target(addr, "/hop"), SOON).await.unwrap();
        assert_eq!((hop.status, hop.body.as_str()), (200, "fine"));
        let away = get(&target(addr, "/away"), SOON).await.unwrap();
        assert_eq!(away.status, 302);
        assert_eq!(
            away.redirect_not_followed,
            Some(format!("http://127.0.0.2:{}/ok", addr.port()))
        );
        let looping = get(&target(addr, "/loop"), SOON).await.unwrap_err();
        assert!(
            matches!(looping, HttpGetError::TooManyRedirects { .. }),
            "{looping}"
        );
    }

    #[tokio::test]
    async fn no_answer_in_time_and_no_listener_are_errors_naming_the_url() {
        let addr = server().await;
        let slow = get(&target(addr, "/slow"), Duration::from_millis(200))
            .await
            .unwrap_err();
        assert!(matches!(slow, HttpGetError::Timeout { .. }), "{slow}");
        assert!(slow.to_string().contains("/slow"), "{slow}");
        let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let dead = closed.local_addr().unwrap();
        drop(closed);
        let refused = get(&target(dead, "/"), SOON).await.unwrap_err();
        assert!(
            refused.to_string().contains("dial tcp")
                && refused.to_string().contains(&dead.to_string()),
            "{refused}"
        );
        assert!(
            matches!(
                refused,
                HttpGetError::Failed {
                    reason: ExchangeError::Dial {
                        kind: io::ErrorKind::ConnectionRefused,
                        ..
                    },
                    ..
                }
            ),
            "{refused:?}"
        );
    }
}
