//! How a probe or a lifecycle hook's network action is carried out against a container: an
//! HTTP GET ([`http_get`]: plain or TLS, same-host redirects, a deadline), a TCP connect
//! ([`tcp`]) or a call of the gRPC health service ([`grpc`]), each as upstream's prober does
//! it. What decides *when* to probe and what a verdict means lives in the pod actor; this crate
//! only performs one attempt and says what it found ([`Outcome`]).

pub mod grpc;
pub mod http_get;
pub mod tcp;

/// What one probe attempt found; each carries the output or reason, for logs and events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The check passed.
    Success(String),
    /// The check passed with a warning: an HTTP redirect to another host, not followed. As
    /// upstream, it counts as a success and is told in a `ProbeWarning` event.
    Warning(String),
    /// The check ran and failed.
    Failure(String),
    /// The check could not run (the runtime was away, a named port is missing); as upstream,
    /// such an attempt does not count either way.
    Unknown(String),
}

impl Outcome {
    /// The `result` label of `prober_probe_total`.
    #[must_use]
    pub const fn label(&self) -> &'static str {
        match self {
            Self::Success(_) | Self::Warning(_) => "successful",
            Self::Failure(_) => "failed",
            Self::Unknown(_) => "unknown",
        }
    }
}
