//! The one wrapper every CRI call goes through: deadline, metrics, error mapping, failpoint.
//!
//! Keeping this in one generic function means a new call cannot forget its deadline or its
//! metrics, and the failpoint `cri::call` covers every call at once.

use std::future::Future;
use std::time::{Duration, Instant};

use super::error::CriError;
use super::metrics::{self, Operation};

/// Sends `message` as `operation` through `send`, bounded by `deadline`.
///
/// The deadline is enforced locally (so a wedged runtime cannot hold a caller) and also sent to
/// the runtime as the gRPC deadline so it can stop working on the request. A server stream gets
/// neither (its `deadline` is `None`): gRPC servers send a stream's headers with its first
/// message, so opening one waits for the runtime's first event, for as long as that takes; its
/// caller bounds the wait (see the CRI adapter's event subscription). Every call, successful or
/// not, is counted and timed under the operation's upstream name.
///
/// With the `failpoints` feature, the failpoint `cri::call` makes the call fail with
/// [`CriError::Unavailable`] before anything is sent (its argument, if any, is added to the
/// message); the failure is counted like a real one.
///
/// # Errors
///
/// The runtime's gRPC status mapped to [`CriError`], or [`CriError::DeadlineExceeded`] when no
/// answer came within `deadline`.
pub(crate) async fn call<Req, Resp, F, Fut>(
    operation: Operation,
    deadline: Option<Duration>,
    message: Req,
    send: F,
) -> Result<Resp, CriError>
where
    F: FnOnce(tonic::Request<Req>) -> Fut,
    Fut: Future<Output = Result<tonic::Response<Resp>, tonic::Status>>,
{
    let started = Instant::now();
    let result = attempt(operation, deadline, message, send).await;
    let elapsed = started.elapsed();
    metrics::record(operation, elapsed, result.is_err());
    match &result {
        Ok(_) => tracing::trace!(operation = operation.name(), ?elapsed, "CRI call done"),
        Err(error) => {
            tracing::debug!(operation = operation.name(), ?elapsed, %error, "CRI call failed");
        }
    }
    result
}

async fn attempt<Req, Resp, F, Fut>(
    operation: Operation,
    deadline: Option<Duration>,
    message: Req,
    send: F,
) -> Result<Resp, CriError>
where
    F: FnOnce(tonic::Request<Req>) -> Fut,
    Fut: Future<Output = Result<tonic::Response<Resp>, tonic::Status>>,
{
    fail::fail_point!("cri::call", |arg: Option<String>| {
        Err(CriError::Unavailable {
            operation: operation.name(),
            message: match arg {
                Some(arg) => format!("failpoint cri::call: {arg}"),
                None => "failpoint cri::call".to_string(),
            },
        })
    });
    let mut request = tonic::Request::new(message);
    let Some(deadline) = deadline else {
        return send(request)
            .await
            .map(tonic::Response::into_inner)
            .map_err(|status| super::error::from_status(operation.name(), &status));
    };
    request.set_timeout(deadline);
    match tokio::time::timeout(deadline, send(request)).await {
        Ok(Ok(response)) => Ok(response.into_inner()),
        Ok(Err(status)) => Err(super::error::from_status(operation.name(), &status)),
        Err(_elapsed) => Err(CriError::DeadlineExceeded {
            operation: operation.name(),
            message: format!("no answer from the runtime within {deadline:?}"),
        }),
    }
}
