//! The TLS listener of the kubelet API: accepts up to a connection cap, bounds the TLS
//! handshake and the request head with timeouts (a slow or abusive client cannot hold the
//! server), and hands each connection's verified client certificate to the routes.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::{Extension, Router};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

use super::super::routes::bind;
use super::guard::PeerIdentity;
use super::identity::User;

/// Connections served at once; more wait in the kernel's backlog.
const MAX_CONNECTIONS: usize = 512;
/// How long a client may take to finish the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client may take to send a request head.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Binds `addr` now (so a taken port fails the caller at once) and serves `router` over TLS
/// in a task.
///
/// # Errors
/// Why the address cannot be listened on.
pub fn serve(
    addr: SocketAddr,
    tls: Arc<ServerConfig>,
    router: Router,
) -> Result<JoinHandle<()>, String> {
    let listener = bind(addr)?;
    let acceptor = TlsAcceptor::from(tls);
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    Ok(actix_rt::spawn(async move {
        loop {
            let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
                return;
            };
            let (tcp, peer) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(err) => {
                    tracing::debug!(%addr, "accept failed: {err}");
                    continue;
                }
            };
            let (acceptor, router) = (acceptor.clone(), router.clone());
            actix_rt::spawn(async move {
                connection(acceptor, router, tcp, peer).await;
                drop(slot);
            });
        }
    }))
}

async fn connection(
    acceptor: TlsAcceptor,
    router: Router,
    tcp: tokio::net::TcpStream,
    peer: SocketAddr,
) {
    let tls = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
        Ok(Ok(tls)) => tls,
        Ok(Err(err)) => return tracing::debug!(%peer, "TLS handshake failed: {err}"),
        Err(_) => return tracing::debug!(%peer, "TLS handshake timed out"),
    };
    let identity = tls
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|chain| chain.first())
        .map(|cert| User::from_certificate(cert));
    let service = TowerToHyperService::new(router.layer(Extension(PeerIdentity(identity))));
    let served = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(TokioIo::new(tls), service)
        .with_upgrades()
        .await;
    if let Err(err) = served {
        tracing::debug!(%peer, "connection ended: {err}");
    }
}
