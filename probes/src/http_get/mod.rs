//! HTTP GET against a container, as httpGet lifecycle hooks and probes do it: [`HttpTarget::resolve`]
//! turns an `HTTPGetAction` into a target (host defaulting to the pod IP, named ports, headers),
//! and [`get`] performs the request with a deadline, following redirects on the same host as
//! upstream does; [`probe`] turns its answer into a probe's verdict.

mod client;
mod probe;
mod target;
mod tls;

pub use client::{get, ExchangeError, HttpAnswer, HttpGetError};
pub use probe::probe;
pub use target::{authority, resolve_port, HttpTarget, PortError, TargetError};
pub use tls::TlsClientError;
