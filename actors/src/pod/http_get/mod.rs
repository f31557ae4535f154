//! HTTP GET against a container, as httpGet lifecycle hooks and probes do it: [`HttpTarget::resolve`]
//! turns an `HTTPGetAction` into a target (host defaulting to the pod IP, named ports, headers),
//! and [`get`] performs the request with a deadline, following redirects on the same host as
//! upstream does.

mod client;
mod target;
mod tls;

pub use client::{get, HttpAnswer, HttpGetError};
pub use target::{authority, resolve_port, HttpTarget, TargetError};
