//! The gate in front of every authenticated endpoint: authenticate, then authorize, then
//! serve; 401 and 403 (or 500 when no decision could be had) otherwise. Counts requests in
//! upstream's `kubelet_http_requests_total`, by method and path buckets a client cannot add
//! to.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::super::routes::{path_bucket, Endpoints};
use super::attributes;
use super::authn::Authenticator;
use super::authz::{Authorizer, Refusal};
use super::identity::{CertificateUserError, User};

/// The user a connection's verified client certificate names (or why it names nobody), put
/// into each request's extensions by the listener.
#[derive(Debug, Clone)]
pub struct PeerIdentity(pub Option<Result<User, CertificateUserError>>);

/// The authenticator and authorizer of one server.
pub struct Guard {
    /// Who is asking.
    pub authn: Authenticator,
    /// Whether they may.
    pub authz: Authorizer,
}

/// The middleware: lets a request through only when authenticated and authorized.
pub async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let path = path_bucket(request.uri().path());
    let method = method_bucket(request.method());
    let response = decide(&guard, request, next).await;
    metrics::counter!(
        "kubelet_http_requests_total",
        "method" => method,
        "path" => path,
        "server_type" => Endpoints::Authenticated.server_type(),
        "code" => response.status().as_u16().to_string(),
    )
    .increment(1);
    response
}

/// The metrics bucket of `method`: the standard methods by name, `other` for the ones a
/// client makes up, as upstream.
fn method_bucket(method: &Method) -> &'static str {
    [
        Method::OPTIONS,
        Method::GET,
        Method::HEAD,
        Method::POST,
        Method::PUT,
        Method::DELETE,
        Method::TRACE,
        Method::CONNECT,
        Method::PATCH,
    ]
    .iter()
    .find(|known| *known == method)
    .map_or("other", Method::as_str)
}

async fn decide(guard: &Guard, request: Request, next: Next) -> Response {
    let peer = request
        .extensions()
        .get::<PeerIdentity>()
        .and_then(|p| p.0.clone());
    let certificate_user = match peer {
        Some(Ok(user)) => Some(user),
        Some(Err(error)) => return refuse(StatusCode::UNAUTHORIZED, &error.to_string()),
        None => None,
    };
    let bearer = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let user = match guard
        .authn
        .authenticate(certificate_user.as_ref(), bearer)
        .await
    {
        Ok(user) => user,
        Err(reason) => {
            tracing::debug!(
                "unauthenticated request to {}: {reason}",
                request.uri().path()
            );
            return refuse(StatusCode::UNAUTHORIZED, "Unauthorized");
        }
    };
    let upgrade = request.headers().contains_key(header::UPGRADE);
    let asked = attributes::for_request(request.method(), request.uri().path(), upgrade);
    match guard.authz.authorize(&user, &asked).await {
        Ok(()) => next.run(request).await,
        Err(refusal @ Refusal::Denied { .. }) => {
            refuse(StatusCode::FORBIDDEN, &refusal.to_string())
        }
        Err(refusal @ Refusal::Failed(_)) => {
            tracing::warn!(user = user.name, "{refusal}");
            refuse(StatusCode::INTERNAL_SERVER_ERROR, &refusal.to_string())
        }
    }
}

fn refuse(status: StatusCode, message: &str) -> Response {
    (status, format!("{message}\n")).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_up_methods_are_counted_as_other() {
        assert_eq!(method_bucket(&Method::GET), "GET");
        assert_eq!(method_bucket(&Method::PATCH), "PATCH");
        let made_up = Method::from_bytes(b"MADE-UP-123").unwrap();
        assert_eq!(method_bucket(&made_up), "other");
    }
}
