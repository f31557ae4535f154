//! The TLS transport of the kubelet API's listener: the handshake, and the user its verified
//! client certificate names handed to the routes of that connection.
//!
//! Entry point: [`Tls`], a [`Transport`] for the server's listener, which bounds the handshake
//! with its setup timeout.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::{Extension, Router};
use tokio::net::TcpStream;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

use super::super::listener::Transport;
use super::guard::PeerIdentity;
use super::identity::User;

/// Connections set up with a TLS handshake under a server configuration.
#[derive(Clone)]
pub struct Tls(pub TlsAcceptor);

impl Tls {
    /// The transport of `config`.
    #[must_use]
    pub fn new(config: Arc<ServerConfig>) -> Self {
        Self(TlsAcceptor::from(config))
    }
}

impl Transport for Tls {
    type Io = TlsStream<TcpStream>;

    async fn set_up(
        &self,
        tcp: TcpStream,
        peer: SocketAddr,
        router: Router,
    ) -> Option<(Self::Io, Router)> {
        let tls = match self.0.accept(tcp).await {
            Ok(tls) => tls,
            Err(err) => {
                tracing::debug!(%peer, "TLS handshake failed: {err}");
                return None;
            }
        };
        let identity = tls
            .get_ref()
            .1
            .peer_certificates()
            .and_then(|chain| chain.first())
            .map(|cert| User::from_certificate(cert));
        let router = router.layer(Extension(PeerIdentity(identity)));
        Some((tls, router))
    }
}
