//! Why a status update or a lease renewal failed. None of these stop the actor: it retries
//! with back-off and says the last error in its status line.

/// A failed call to the API server.
#[derive(Debug, thiserror::Error)]
#[error("{operation} {object}: {source}")]
pub struct ApiCallError {
    /// What was being done (`create`, `patch status of`, `renew`, …).
    pub operation: &'static str,
    /// The object (`node/x`, `lease kube-node-lease/x`).
    pub object: String,
    /// What the API server (or the connection to it) said.
    #[source]
    pub source: kube::Error,
}

impl ApiCallError {
    /// A closure that wraps a `kube::Error` of `operation` on `object`, for `map_err`.
    pub(super) fn of<'a>(
        operation: &'static str,
        object: &'a str,
    ) -> impl FnOnce(kube::Error) -> Self + 'a {
        move |source| Self {
            operation,
            object: object.to_owned(),
            source,
        }
    }
}

/// Whether the API server answered `kube_error` with the status `is`.
pub(super) fn api_status(kube_error: &kube::Error, is: fn(&kube::core::Status) -> bool) -> bool {
    matches!(kube_error, kube::Error::Api(status) if is(status))
}
