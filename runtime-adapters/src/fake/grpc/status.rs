//! The runtime port's errors as gRPC statuses: the inverse of the CRI client's mapping, so a
//! call failed by the fake reaches the kubelet with the kind it had.

use sergeant_messages::runtime_error::RuntimeError;
use tonic::{Code, Status};

/// The gRPC status a CRI runtime answers for `error`.
pub(super) fn to_status(error: &RuntimeError) -> Status {
    let code = match error {
        RuntimeError::NotFound { .. } => Code::NotFound,
        RuntimeError::Unavailable { .. } => Code::Unavailable,
        RuntimeError::DeadlineExceeded { .. } => Code::DeadlineExceeded,
        RuntimeError::InvalidArgument { .. } => Code::InvalidArgument,
        RuntimeError::AlreadyExists { .. } => Code::AlreadyExists,
        RuntimeError::Unimplemented { .. } => Code::Unimplemented,
        RuntimeError::Protocol { .. } => Code::Internal,
        RuntimeError::Other { code, .. } => code_named(code),
    };
    Status::new(code, error.message())
}

/// The gRPC code whose name (as `{:?}` prints it) is `name`; `Unknown` for any other.
fn code_named(name: &str) -> Code {
    const NAMED: [Code; 9] = [
        Code::Cancelled,
        Code::PermissionDenied,
        Code::ResourceExhausted,
        Code::FailedPrecondition,
        Code::Aborted,
        Code::OutOfRange,
        Code::Internal,
        Code::DataLoss,
        Code::Unauthenticated,
    ];
    NAMED
        .into_iter()
        .find(|code| format!("{code:?}") == name)
        .unwrap_or(Code::Unknown)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(kind: fn(String) -> RuntimeError) -> RuntimeError {
        kind("what the runtime said".to_owned())
    }

    #[test]
    fn each_kind_gets_the_code_a_cri_runtime_answers() {
        let cases: [(RuntimeError, Code); 9] = [
            (
                error(|message| RuntimeError::NotFound {
                    operation: "x",
                    message,
                }),
                Code::NotFound,
            ),
            (
                error(|message| RuntimeError::Unavailable {
                    operation: "x",
                    message,
                }),
                Code::Unavailable,
            ),
            (
                error(|message| RuntimeError::DeadlineExceeded {
                    operation: "x",
                    message,
                }),
                Code::DeadlineExceeded,
            ),
            (
                error(|message| RuntimeError::InvalidArgument {
                    operation: "x",
                    message,
                }),
                Code::InvalidArgument,
            ),
            (
                error(|message| RuntimeError::AlreadyExists {
                    operation: "x",
                    message,
                }),
                Code::AlreadyExists,
            ),
            (
                error(|message| RuntimeError::Unimplemented {
                    operation: "x",
                    message,
                }),
                Code::Unimplemented,
            ),
            (
                error(|message| RuntimeError::Protocol {
                    operation: "x",
                    message,
                }),
                Code::Internal,
            ),
            (
                error(|message| RuntimeError::Other {
                    operation: "x",
                    code: "FailedPrecondition".to_owned(),
                    message,
                }),
                Code::FailedPrecondition,
            ),
            (
                error(|message| RuntimeError::Other {
                    operation: "x",
                    code: "no such code".to_owned(),
                    message,
                }),
                Code::Unknown,
            ),
        ];
        for (error, code) in cases {
            let status = to_status(&error);
            assert_eq!(status.code(), code, "{error}");
            assert_eq!(status.message(), "what the runtime said");
        }
    }
}
