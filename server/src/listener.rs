//! Every listener of the server (healthz, read-only, the TLS kubelet API) accepts and serves
//! its connections here, under the same bounds, so that slow, idle or half-sent clients cannot
//! hold it or its memory: a cap on connections served at once, a deadline for a connection to
//! be set up (the TLS handshake) and for each request head (which also closes idle keep-alive
//! connections), a bound on the head's size and on any body read; and a panic in a handler is
//! answered 500 ([`panics`](super::panics)).
//!
//! Entry point: [`serve`], with a [`Transport`] ([`Plain`] here, TLS in `secure`); the
//! [`Listener`](super::Listener) actor runs what it returns.
//!
//! Upstream's kubelet serves with Go's `http.Server`: `IdleTimeout` 90 s, `ReadTimeout` and
//! `WriteTimeout` 4 h, `MaxHeaderBytes` 1 MiB, no header timeout and no connection cap; a Go
//! connection costs a goroutine, and a client that never finishes its head is only dropped
//! after 4 h. The bounds here are tighter, for the reasons beside each.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use sergeant_core::backoff::Doubling;
use sergeant_supervisor::failpoint;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::Semaphore;

use super::panics;
use super::routes::Endpoints;

/// Connections a listener serves at once; more wait in the kernel's backlog until one ends.
/// A connection costs a task and hyper's buffers (about 10 KiB idle, at most
/// [`MAX_HEAD_BYTES`] more while a head is read): 512 of them bound the server's share to a
/// few MiB per listener, and are far more than a node's clients (the API server, the metrics
/// scraper, a few `kubectl logs -f`) keep open.
const MAX_CONNECTIONS: usize = 512;
/// Connections the kernel holds for a listener while every slot is taken (it caps this at
/// `net.core.somaxconn`, as Go's listeners use): twice the cap, so a burst is queued rather
/// than refused. They cost kernel memory only, and wait for a slot, not for the server.
const BACKLOG: u32 = 2 * MAX_CONNECTIONS as u32;
/// How long a connection may take to be set up (the TLS handshake: two round trips and a
/// signature; a plain connection is set up at once).
const SETUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client may take to send a whole request head, counted from when the
/// connection is ready for one: after it is set up, and again after each response, so an
/// idle keep-alive connection is closed after this long too (hyper's header timer runs while
/// it waits). A head is a few hundred bytes, sent at once by the API server, kubectl and
/// scrapers; 10 s allows for a slow link, and a client that trickles its head holds a slot
/// no longer than that. Go's `IdleTimeout` (90 s) keeps idle connections longer; clients
/// reconnect when one is closed.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest request head (request line and headers) read; a larger one is answered 431.
/// The longest legitimate heads are exec requests with their command in the query; 64 KiB
/// holds a command of thousands of words, and 512 connections reading one hold 32 MiB at
/// most. (Go allows 1 MiB.)
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// The largest request body an extractor reads. No endpoint takes a body today (exec and
/// attach streams go through the upgraded connection, not a body); this bounds any that
/// would, instead of axum's default of 2 MiB.
const MAX_BODY_BYTES: usize = 64 * 1024;
/// The first pause after an accept error that passes by itself (Go's server: 5 ms)...
const ACCEPT_PAUSE_MIN: Duration = Duration::from_millis(5);
/// ...doubling up to this (Go's: 1 s).
const ACCEPT_PAUSE_MAX: Duration = Duration::from_secs(1);

/// How a listener's connections are set up before HTTP is spoken over them.
pub trait Transport: Clone + 'static {
    /// The stream HTTP is spoken over.
    type Io: AsyncRead + AsyncWrite + Unpin + Send + 'static;

    /// Sets up the accepted connection `tcp` from `peer`: the stream, and the routes to serve
    /// on it (`router`, with what the setup learnt added); `None`, having said why at debug
    /// level, when it cannot be set up.
    fn set_up(
        &self,
        tcp: TcpStream,
        peer: SocketAddr,
        router: Router,
    ) -> impl Future<Output = Option<(Self::Io, Router)>>;
}

/// Plain HTTP: the connection as accepted.
#[derive(Debug, Clone, Copy)]
pub struct Plain;

impl Transport for Plain {
    type Io = TcpStream;

    async fn set_up(
        &self,
        tcp: TcpStream,
        _: SocketAddr,
        router: Router,
    ) -> Option<(TcpStream, Router)> {
        Some((tcp, router))
    }
}

/// Why a listener's address cannot be listened on (taken, not the node's, not allowed): the
/// listener fails with it and its supervisor starts it again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot listen on {addr}: {message}")]
pub struct BindError {
    /// The address.
    pub addr: SocketAddr,
    /// The operating system's error kind (`AddrInUse`, `AddrNotAvailable`, …).
    pub kind: io::ErrorKind,
    /// Its text.
    pub message: String,
}

/// Binds `addr` now, so a taken port fails the caller at once.
///
/// # Errors
/// [`BindError`]: why the address cannot be listened on.
fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, BindError> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()
    } else {
        TcpSocket::new_v6()
    };
    socket
        .and_then(|s| s.set_reuseaddr(true).map(|()| s))
        .and_then(|s| s.bind(addr).map(|()| s))
        .and_then(|s| s.listen(BACKLOG))
        .map_err(|err| BindError {
            addr,
            kind: err.kind(),
            message: err.to_string(),
        })
}

/// Binds `addr` now (so a taken port fails the caller at once) and returns the future that
/// serves `router`, the routes of `endpoints`, over `transport` under this module's bounds. The
/// future runs until the listener cannot go on, and then says why; its owner (a
/// [`Listener`](super::Listener) actor) fails with that reason and its supervisor starts it
/// again.
///
/// # Errors
/// [`BindError`]: why the address cannot be listened on.
pub fn serve<T: Transport>(
    addr: SocketAddr,
    endpoints: Endpoints,
    transport: T,
    router: Router,
) -> Result<impl Future<Output = String>, BindError> {
    let listener = bind(addr)?;
    let router = panics::caught(
        router.layer(DefaultBodyLimit::max(MAX_BODY_BYTES)),
        endpoints,
    );
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    Ok(async move {
        let mut pause = Doubling::new(ACCEPT_PAUSE_MIN, ACCEPT_PAUSE_MAX);
        loop {
            let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
                return format!("{addr}: the connection slots were closed");
            };
            if let Err(fault) = failpoint::check("server::accept") {
                return format!("{addr}: {fault}");
            }
            let (tcp, peer) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(err) if is_transient(&err) => {
                    // Out of file descriptors or a connection reset before it was taken:
                    // wait a little instead of spinning, as Go's server does.
                    let pause = pause.next_delay();
                    tracing::warn!(%addr, ?pause, "accept failed, pausing: {err}");
                    tokio::time::sleep(pause).await;
                    continue;
                }
                Err(err) => return format!("{addr}: accept failed: {err}"),
            };
            pause.reset();
            let (transport, router) = (transport.clone(), router.clone());
            actix_rt::spawn(async move {
                connection(transport, router, tcp, peer).await;
                drop(slot);
            });
        }
    })
}

/// Whether an accept error passes by itself (a resource running out for a while, a peer that
/// gave up), so the listener pauses and goes on rather than failing.
fn is_transient(err: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        err.kind(),
        ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset | ErrorKind::Interrupted
    ) || crate::exhausted::is_exhausted(err)
}

async fn connection<T: Transport>(transport: T, router: Router, tcp: TcpStream, peer: SocketAddr) {
    let set_up = tokio::time::timeout(SETUP_TIMEOUT, transport.set_up(tcp, peer, router)).await;
    let (io, router) = match set_up {
        Ok(Some(ready)) => ready,
        Ok(None) => return,
        Err(_) => return tracing::debug!(%peer, "connection not set up in {SETUP_TIMEOUT:?}"),
    };
    let served = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .max_buf_size(MAX_HEAD_BYTES)
        .serve_connection(TokioIo::new(io), TowerToHyperService::new(router))
        .with_upgrades()
        .await;
    if let Err(err) = served {
        tracing::debug!(%peer, "connection ended: {err}");
    }
}
