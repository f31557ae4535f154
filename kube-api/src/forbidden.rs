//! Retrying a read the Node authorizer refuses for a moment after a pod is bound.
//!
//! The node's credentials may read a config map or secret, or request a service account
//! token, only for the pods bound to it, and the Node authorizer learns of a new binding
//! asynchronously, from its own watch of the pods. The first read for a pod that was just
//! bound (the `kube-root-ca.crt` config map of its projected service account volume, say) can
//! therefore be answered 403 Forbidden although a retry a few milliseconds later succeeds.
//! [`retry_forbidden`] retries such answers at once and briefly, so the pod starts without
//! waiting for its next sync, and a `FailedMount` event is reported only when the refusal
//! persists (then it is real: the pod is not bound here, or the object is not the pod's).

use std::future::Future;
use std::time::{Duration, Instant};

use kube::core::Status;

use sergeant_core::backoff::RetryBackoff;
use sergeant_supervisor::failpoint::{self, InjectedFault};

/// How long a Forbidden answer is taken as the authorizer catching up. The graph usually
/// catches up within milliseconds; seconds cover a busy API server.
const GRACE: Duration = Duration::from_secs(3);
/// The first step between two attempts.
const RETRY_FIRST: Duration = Duration::from_millis(50);
/// The largest step between two attempts.
const RETRY_MAX: Duration = Duration::from_millis(800);
/// The failpoint that answers an attempt 403 Forbidden, as the Node authorizer does before it
/// links a new pod to the node (`api::forbidden=3*return` refuses the next three attempts).
const FAILPOINT: &str = "api::forbidden";

/// Calls `call` until it is answered with anything but 403 Forbidden, or a Forbidden answer
/// persisted for [`GRACE`]; returns the last answer. `what` names the call in the log.
///
/// # Errors
/// The call's own error: any but Forbidden at once, Forbidden once it persisted.
pub async fn retry_forbidden<T, F, Fut>(what: &str, mut call: F) -> Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
{
    let started = Instant::now();
    let mut backoff = RetryBackoff::new(RETRY_FIRST, RETRY_MAX);
    let mut refusals = 0;
    loop {
        let answer = match failpoint::check(FAILPOINT) {
            Ok(()) => call().await,
            Err(fault) => Err(injected_refusal(what, &fault)),
        };
        match answer {
            Err(kube::Error::Api(status)) if status.is_forbidden() && started.elapsed() < GRACE => {
                refusals += 1;
                let delay = backoff.next_delay();
                tracing::debug!("{what}: forbidden for now ({status}), retrying in {delay:?}");
                tokio::time::sleep(delay).await;
            }
            answer => {
                if refusals > 0 && answer.is_ok() {
                    tracing::info!(
                        "{what}: allowed after {refusals} Forbidden answers in {:?} (the Node \
                         authorizer had not linked the pod to this node yet)",
                        started.elapsed()
                    );
                }
                return answer;
            }
        }
    }
}

/// The Forbidden answer the failpoint [`FAILPOINT`] stands for.
fn injected_refusal(what: &str, fault: &InjectedFault) -> kube::Error {
    let message = format!("{what}: {fault}");
    kube::Error::Api(
        Status::failure(&message, "Forbidden")
            .with_code(403)
            .boxed(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(code: u16, reason: &str) -> kube::Error {
        kube::Error::Api(Status::failure("refused", reason).with_code(code).boxed())
    }

    #[tokio::test]
    async fn a_passing_refusal_is_retried_until_the_answer() {
        let mut calls = 0;
        let answer = retry_forbidden("reading configmap default/x", || {
            calls += 1;
            let answer = if calls < 3 {
                Err(refusal(403, "Forbidden"))
            } else {
                Ok(calls)
            };
            async move { answer }
        })
        .await;
        assert_eq!(answer.ok(), Some(3));
    }

    #[tokio::test]
    async fn other_errors_are_answered_at_once() {
        let mut calls = 0;
        let answer: Result<(), _> = retry_forbidden("reading configmap default/x", || {
            calls += 1;
            async { Err(refusal(500, "InternalError")) }
        })
        .await;
        assert!(answer.is_err());
        assert_eq!(calls, 1);
    }

    #[tokio::test]
    async fn a_lasting_refusal_is_answered_after_the_grace() {
        let started = Instant::now();
        let answer: Result<(), _> = retry_forbidden("reading configmap default/x", || async {
            Err(refusal(403, "Forbidden"))
        })
        .await;
        assert!(
            matches!(answer, Err(kube::Error::Api(ref s)) if s.is_forbidden()),
            "{answer:?}"
        );
        let took = started.elapsed();
        assert!(took >= GRACE && took < GRACE * 2, "{took:?}");
    }
}
