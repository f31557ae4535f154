//! The authenticated kubelet API on `port` (10250): TLS ([`tls`]), authentication of client
//! certificates and bearer tokens ([`authn`]), authorization as `nodes/<subresource>`
//! ([`attributes`], [`authz`]), enforced in front of every route ([`guard`]), served by the
//! server's listener (with its connection cap and timeouts) over a TLS transport
//! ([`handshake`]).
//!
//! Entry point: [`serve`].

mod attributes;
mod authn;
mod authz;
mod cache;
mod guard;
mod handshake;
mod identity;
mod tls;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use sergeant_config::kubelet::{AuthorizationMode, KubeletConfiguration};

pub use tls::{TlsError, TlsSettings};

use super::listener;
use super::routes::Endpoints;
use crate::ListenerError;
use authn::Authenticator;
use authz::{Authorizer, Webhook};
use guard::Guard;

/// Binds `addr` and returns the future serving `router` there over TLS (`settings`), every
/// request authenticated and authorized as `kubelet` configures, asking the API server through
/// `api` (none in standalone mode) about node `settings.node_name`.
///
/// # Errors
/// [`ListenerError::Tls`] when the TLS configuration could not be built,
/// [`ListenerError::Bind`] when the address could not be listened on.
pub fn serve(
    addr: SocketAddr,
    kubelet: &KubeletConfiguration,
    settings: &TlsSettings,
    api: Option<kube::Client>,
    router: Router,
) -> Result<impl std::future::Future<Output = String>, ListenerError> {
    let tls = tls::server_config(settings)?;
    let authentication = &kubelet.authentication;
    let webhook = authentication
        .webhook
        .enabled
        .then(|| {
            api.clone()
                .map(|c| (c, authentication.webhook.cache_ttl.as_std()))
        })
        .flatten();
    let authz = match kubelet.authorization.mode {
        AuthorizationMode::AlwaysAllow => Authorizer::AlwaysAllow,
        AuthorizationMode::Webhook => Authorizer::Webhook(Box::new(Webhook::new(
            api,
            settings.node_name.clone(),
            kubelet.authorization.webhook.cache_authorized_ttl.as_std(),
            kubelet
                .authorization
                .webhook
                .cache_unauthorized_ttl
                .as_std(),
        ))),
    };
    let guard = Arc::new(Guard {
        authn: Authenticator::new(authentication.anonymous.enabled, webhook),
        authz,
    });
    let router = router.layer(axum::middleware::from_fn_with_state(guard, guard::check));
    Ok(listener::serve(
        addr,
        Endpoints::Authenticated,
        handshake::Tls::new(tls),
        router,
    )?)
}
