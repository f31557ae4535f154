//! The errors the fake runtime answers with, shaped as containerd's CRI server reports them.

use std::fmt::Display;

use sergeant_messages::runtime_error::RuntimeError;

/// The object named by `what` does not exist.
pub(super) fn not_found(operation: &'static str, what: impl Display) -> RuntimeError {
    RuntimeError::NotFound {
        operation,
        message: format!("{what} not found"),
    }
}

/// The name (or object) `what` is already taken.
pub(super) fn already_exists(operation: &'static str, what: impl Display) -> RuntimeError {
    RuntimeError::AlreadyExists {
        operation,
        message: format!("{what} is already in use"),
    }
}

/// The request is malformed.
pub(super) fn invalid_argument(operation: &'static str, message: impl Display) -> RuntimeError {
    RuntimeError::InvalidArgument {
        operation,
        message: message.to_string(),
    }
}

/// The object exists but is not in a state the call accepts (gRPC `FailedPrecondition`).
pub(super) fn failed_precondition(operation: &'static str, message: impl Display) -> RuntimeError {
    RuntimeError::Other {
        operation,
        code: "FailedPrecondition".to_string(),
        message: message.to_string(),
    }
}

/// A finite resource of the runtime ran out (gRPC `ResourceExhausted`).
pub(super) fn exhausted(operation: &'static str, message: impl Display) -> RuntimeError {
    RuntimeError::Other {
        operation,
        code: "ResourceExhausted".to_string(),
        message: message.to_string(),
    }
}
