//! A panic in a handler, answered: logged with the request's method and path (never its query,
//! which may carry secrets), counted in [`PANICS`], and answered 500, where it would otherwise
//! end the connection's task and drop the client without a word. The connection and the
//! server carry on.
//!
//! Entry point: [`caught`], which the listener puts in front of every route.

use std::any::Any;
use std::panic::AssertUnwindSafe;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use futures::FutureExt;

use super::routes::{path_bucket, Endpoints};

/// The counter of handler panics, by `server_type` and `path` (the bucket of
/// `kubelet_http_requests_total`). Upstream has none: its Go server recovers a handler's
/// panic and only logs it.
pub const PANICS: &str = "sergeant_http_handler_panics_total";

/// Describes [`PANICS`] to the metrics recorder.
pub fn describe() {
    metrics::describe_counter!(
        PANICS,
        "Requests whose handler panicked, answered 500, by server type and path"
    );
}

/// `router` with the panics of its handlers (those of `endpoints`) caught.
pub fn caught(router: Router, endpoints: Endpoints) -> Router {
    router.layer(axum::middleware::from_fn_with_state(endpoints, catch))
}

/// Runs the request's handler, answering 500 if it panics.
async fn catch(State(endpoints): State<Endpoints>, request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let payload = match AssertUnwindSafe(next.run(request)).catch_unwind().await {
        Ok(response) => return response,
        Err(payload) => payload,
    };
    let server_type = endpoints.server_type();
    tracing::error!(
        %method,
        path,
        server_type,
        "handler panicked: {}",
        message(payload.as_ref())
    );
    metrics::counter!(PANICS, "server_type" => server_type, "path" => path_bucket(&path))
        .increment(1);
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        "Internal Server Error: the request's handler failed\n",
    )
        .into_response()
}

/// The message a panic was raised with.
fn message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(a panic without a message)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::routing::get;
    use tower::ServiceExt;

    async fn status_of(router: Router, path: &str) -> StatusCode {
        let request = Request::get(path).body(Body::empty()).unwrap();
        router.oneshot(request).await.unwrap().status()
    }

    #[tokio::test]
    async fn a_panicking_handler_is_answered_500_and_the_others_as_they_answer() {
        let router = Router::new()
            .route(
                "/pods",
                get(|| async { panic!("injected in a unit test") as &'static str }),
            )
            .route("/healthz", get(|| async { "ok" }));
        let router = caught(router, Endpoints::ReadOnly);
        assert_eq!(
            status_of(router.clone(), "/pods?token=x").await,
            StatusCode::INTERNAL_SERVER_ERROR
        );
        assert_eq!(status_of(router.clone(), "/healthz").await, StatusCode::OK);
        assert_eq!(status_of(router, "/nothing").await, StatusCode::NOT_FOUND);
    }

    #[test]
    fn the_message_is_read_from_either_kind_of_payload() {
        let literal: Box<dyn Any + Send> = Box::new("literal");
        let formatted: Box<dyn Any + Send> = Box::new(format!("formatted {}", 1));
        let other: Box<dyn Any + Send> = Box::new(7_u8);
        assert_eq!(message(literal.as_ref()), "literal");
        assert_eq!(message(formatted.as_ref()), "formatted 1");
        assert_eq!(message(other.as_ref()), "(a panic without a message)");
    }
}
