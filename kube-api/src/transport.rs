//! [`client_over_http2`]: the API client on one multiplexed HTTP/2 connection per API server,
//! as the upstream kubelet's, instead of kube's default HTTP/1.1 client.
//!
//! Over HTTP/1.1 every request in flight needs a connection of its own: each watch holds one,
//! and a burst of status writes opens a TLS connection per write (29 at once with 30 pods
//! starting). HTTP/2 carries the watches and the writes as streams of one connection. Its
//! pings also find a connection that died without a word (a peer gone, a network partition):
//! with no answer to a ping within [`PING_TIMEOUT`] the connection is dropped, and every
//! watch and request on it fails and is retried, where HTTP/1.1 waited out kube's read
//! timeout of almost five minutes.

use std::time::Duration;

use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use kube::client::{Body, ClientBuilder, ConfigExt};
use kube::{Client, Config};
use tower::{BoxError, ServiceBuilder};

use crate::throttle::ApiRateLimit;

/// How long a connection may go without a frame from the API server before a ping asks
/// whether it is still there (client-go's `ReadIdleTimeout`).
const PING_INTERVAL: Duration = Duration::from_secs(30);
/// How long a ping may go unanswered before the connection counts as dead (client-go's
/// `PingTimeout`).
const PING_TIMEOUT: Duration = Duration::from_secs(15);

/// The client `config` describes — server, CA, client certificate or token, default
/// namespace — speaking HTTP/2 where the server offers it (ALPN), HTTP/1.1 otherwise. A
/// kubeconfig naming a proxy gets kube's own client, which knows about proxies.
///
/// # Errors
/// The TLS settings or credentials of `config` are unusable.
pub fn client_over_http2(config: Config, limit: ApiRateLimit) -> Result<Client, kube::Error> {
    if config.proxy_url.is_some() {
        return Client::try_from(config);
    }
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    // A request is a HEADERS and a DATA frame, often two writes: with Nagle's algorithm the
    // second waits for the server's delayed acknowledgement of the first (up to 40 ms).
    http.set_nodelay(true);
    http.set_connect_timeout(config.connect_timeout);
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config.rustls_client_config()?)
        .https_or_http();
    let https = match &config.tls_server_name {
        Some(name) => {
            let name = name.clone().try_into().map_err(|e| {
                kube::Error::Service(format!("tls-server-name {name:?}: {e}").into())
            })?;
            https.with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name))
        }
        None => https,
    };
    let connector = https.enable_all_versions().wrap_connector(http);
    let transport = hyper_util::client::legacy::Client::builder(TokioExecutor::new())
        .timer(TokioTimer::new())
        .http2_keep_alive_interval(PING_INTERVAL)
        .http2_keep_alive_timeout(PING_TIMEOUT)
        .http2_keep_alive_while_idle(true)
        .build::<_, Body>(connector);
    let service = ServiceBuilder::new()
        .layer(limit)
        .layer(config.base_uri_layer())
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .map_err(BoxError::from)
        .service(transport);
    Ok(ClientBuilder::new(service, config.default_namespace.clone()).build())
}
