//! The API client's errors in the terms of [`ApiFailure`]: how a request for a pod's objects
//! failed (not found, forbidden, refused, not reached), with the client's own text, so the pod
//! sync can tell them apart and its messages keep their words.

use sergeant_core::spec::{ApiFailure, ApiFailureKind};

/// `error` as an [`ApiFailure`].
pub(crate) fn api_failure(error: &kube::Error) -> ApiFailure {
    let kind = match error {
        kube::Error::Api(status) if status.is_not_found() => ApiFailureKind::NotFound,
        kube::Error::Api(status) if status.is_forbidden() => ApiFailureKind::Forbidden,
        kube::Error::Api(status) => ApiFailureKind::Refused(status.code),
        kube::Error::HyperError(_) | kube::Error::Service(_) => ApiFailureKind::Unreachable,
        _ => ApiFailureKind::Other,
    };
    ApiFailure {
        kind,
        message: error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::Status;

    #[test]
    fn answers_are_classed_by_their_code_and_keep_the_clients_text() {
        let answer = |code: u16, reason: &str| {
            kube::Error::Api(Status::failure("refused", reason).with_code(code).boxed())
        };
        let forbidden = api_failure(&answer(403, "Forbidden"));
        assert_eq!(forbidden.kind, ApiFailureKind::Forbidden);
        assert_eq!(forbidden.message, answer(403, "Forbidden").to_string());
        assert_eq!(
            api_failure(&answer(404, "NotFound")).kind,
            ApiFailureKind::NotFound
        );
        assert_eq!(
            api_failure(&answer(500, "InternalError")).kind,
            ApiFailureKind::Refused(500)
        );
        let away = kube::Error::Service("connection refused".into());
        assert_eq!(api_failure(&away).kind, ApiFailureKind::Unreachable);
    }
}
