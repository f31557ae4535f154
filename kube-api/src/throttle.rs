//! [`ApiRateLimit`]: client-go's client-side rate limit on the API client, from `kubeAPIQPS`
//! and `kubeAPIBurst`: a token bucket every request waits on before it is sent, as client-go's
//! `rest.Config.QPS`/`Burst` (0 takes client-go's defaults, 5 and 10). Lease renewals and the
//! node object's reads and status writes are not limited, as upstream sends them through a
//! heartbeat client of its own without a limit, so a busy node never misses its heartbeat.
//! Every request is counted by verb and resource in [`REQUESTS_METRIC`], so what the node asks
//! of the API server (config maps read at each sync, or watched once) can be measured.

use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use sergeant_core::rate::TokenBucket;
use tower::{Layer, Service};

/// client-go's `DefaultQPS`, taken when `kubeAPIQPS` is 0.
const CLIENT_GO_QPS: i32 = 5;
/// client-go's `DefaultBurst`, taken when `kubeAPIBurst` is 0.
const CLIENT_GO_BURST: i32 = 10;

/// The API requests sent, by `verb` (as the API server's audit log names them: `get`, `list`,
/// `watch`, `create`, `update`, `patch`, `delete`) and `resource` (`configmaps`,
/// `serviceaccounts/token`). Upstream's client counts `rest_client_requests_total` by status
/// code, method and host only, which cannot tell a config map read from a status write.
pub const REQUESTS_METRIC: &str = "sergeant_api_requests_total";

/// The limit, shared by every clone of the client.
#[derive(Debug, Clone)]
pub struct ApiRateLimit {
    bucket: Arc<Mutex<TokenBucket>>,
}

impl ApiRateLimit {
    /// `qps` requests a second with bursts of `burst` (`kubeAPIQPS`, `kubeAPIBurst`; 0 takes
    /// client-go's default, negative values are refused by configuration checks).
    #[must_use]
    pub fn new(qps: i32, burst: i32) -> Self {
        let qps = if qps == 0 { CLIENT_GO_QPS } else { qps };
        let burst = if burst == 0 { CLIENT_GO_BURST } else { burst };
        // A burst below 1 would let nothing through (client-go's Wait fails every request).
        let burst = u32::try_from(burst).unwrap_or(1).max(1);
        metrics::describe_counter!(
            REQUESTS_METRIC,
            "Requests sent to the API server, by verb (get, list, watch, create, update, patch, \
             delete) and resource"
        );
        ApiRateLimit {
            bucket: Arc::new(Mutex::new(TokenBucket::new(
                f64::from(qps.max(1)),
                burst,
                Instant::now(),
            ))),
        }
    }

    /// How long a request to `path` waits for its turn (zero for heartbeat requests).
    fn wait(&self, path: &str) -> Duration {
        if is_heartbeat(path) {
            return Duration::ZERO;
        }
        self.bucket
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .reserve(Instant::now())
    }
}

/// Lease renewals and the node object (its reads and status writes): upstream's heartbeat
/// client, which has no rate limit.
fn is_heartbeat(path: &str) -> bool {
    path.starts_with("/apis/coordination.k8s.io/") || path.starts_with("/api/v1/nodes/")
}

impl<S> Layer<S> for ApiRateLimit {
    type Service = Throttled<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Throttled {
            inner,
            limit: self.clone(),
        }
    }
}

/// The API client's service behind [`ApiRateLimit`].
#[derive(Debug, Clone)]
pub struct Throttled<S> {
    inner: S,
    limit: ApiRateLimit,
}

impl<S, B> Service<http::Request<B>> for Throttled<S>
where
    S: Service<http::Request<B>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<S::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let wait = self.limit.wait(request.uri().path());
        let verb = request.method().as_str().to_owned();
        let (request_verb, resource) = request_kind(request.method(), request.uri());
        metrics::counter!(REQUESTS_METRIC, "verb" => request_verb, "resource" => resource)
            .increment(1);
        // The transport's future sends nothing until polled, so the request leaves after the
        // wait.
        let response = self.inner.call(request);
        Box::pin(async move {
            metrics::histogram!("rest_client_rate_limiter_duration_seconds", "verb" => verb)
                .record(wait.as_secs_f64());
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
            response.await
        })
    }
}

/// The verb and resource of a request to `uri` with `method`: the path's resource after
/// `/api/v1/` or `/apis/<group>/<version>/` and an optional `namespaces/<namespace>/`, with
/// its subresource (`pods/status`); a GET of a collection is a `list`, or a `watch` when
/// the query asks for one.
fn request_kind(method: &http::Method, uri: &http::Uri) -> (&'static str, String) {
    let segments: Vec<&str> = uri.path().split('/').filter(|s| !s.is_empty()).collect();
    let rest = match segments.as_slice() {
        ["api", _, rest @ ..] | ["apis", _, _, rest @ ..] => rest,
        _ => &[],
    };
    let rest = match rest {
        ["namespaces", _, tail @ ..] if !tail.is_empty() => tail,
        other => other,
    };
    let resource = match rest {
        [] => "other".to_owned(),
        [kind] | [kind, _] => (*kind).to_owned(),
        [kind, _, sub, ..] => format!("{kind}/{sub}"),
    };
    let collection = rest.len() == 1;
    let watch = uri.query().is_some_and(|q| {
        q.split('&')
            .any(|pair| pair == "watch=true" || pair == "watch=1")
    });
    let verb = match *method {
        http::Method::GET if watch => "watch",
        http::Method::GET if collection => "list",
        http::Method::GET => "get",
        http::Method::POST => "create",
        http::Method::PUT => "update",
        http::Method::PATCH => "patch",
        http::Method::DELETE => "delete",
        _ => "other",
    };
    (verb, resource)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_named_by_verb_and_resource() {
        let kind = |method: http::Method, uri: &str| {
            let (verb, resource) = request_kind(&method, &uri.parse().unwrap());
            format!("{verb} {resource}")
        };
        let get = http::Method::GET;
        assert_eq!(
            kind(
                get.clone(),
                "/api/v1/namespaces/default/configmaps/kube-root-ca.crt"
            ),
            "get configmaps"
        );
        assert_eq!(
            kind(
                get.clone(),
                "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Da"
            ),
            "list configmaps"
        );
        assert_eq!(
            kind(
                get.clone(),
                "/api/v1/namespaces/default/secrets?watch=true&resourceVersion=5"
            ),
            "watch secrets"
        );
        assert_eq!(kind(get.clone(), "/api/v1/pods?watch=1"), "watch pods");
        assert_eq!(
            kind(
                http::Method::POST,
                "/api/v1/namespaces/default/serviceaccounts/default/token"
            ),
            "create serviceaccounts/token"
        );
        assert_eq!(
            kind(http::Method::PATCH, "/api/v1/namespaces/ns/pods/p/status"),
            "patch pods/status"
        );
        assert_eq!(
            kind(
                http::Method::PUT,
                "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n"
            ),
            "update leases"
        );
        assert_eq!(
            kind(get.clone(), "/api/v1/namespaces/default"),
            "get namespaces"
        );
        assert_eq!(kind(get.clone(), "/api/v1/nodes/n"), "get nodes");
        assert_eq!(kind(get, "/version"), "get other");
    }

    #[test]
    fn heartbeats_pass_and_other_requests_queue_past_the_burst() {
        let limit = ApiRateLimit::new(10, 2);
        let lease = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n";
        for _ in 0..20 {
            assert_eq!(limit.wait(lease), Duration::ZERO);
        }
        assert_eq!(
            limit.wait("/api/v1/namespaces/default/configmaps/a"),
            Duration::ZERO
        );
        assert_eq!(limit.wait("/api/v1/pods"), Duration::ZERO);
        let third = limit.wait("/api/v1/namespaces/default/secrets/s");
        assert!(third > Duration::from_millis(80), "{third:?}");
    }

    #[test]
    fn zero_takes_client_go_defaults() {
        let limit = ApiRateLimit::new(0, 0);
        for _ in 0..10 {
            assert_eq!(limit.wait("/api/v1/pods"), Duration::ZERO);
        }
        assert!(limit.wait("/api/v1/pods") > Duration::ZERO);
    }
}
