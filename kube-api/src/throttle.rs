//! [`ApiRateLimit`]: client-go's client-side rate limit on the API client, from `kubeAPIQPS`
//! and `kubeAPIBurst`: a token bucket every request waits on before it is sent, as client-go's
//! `rest.Config.QPS`/`Burst` (0 takes client-go's defaults, 5 and 10). Lease renewals and the
//! node object's reads and status writes are not limited, as upstream sends them through a
//! heartbeat client of its own without a limit, so a busy node never misses its heartbeat.

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

#[cfg(test)]
mod tests {
    use super::*;

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
