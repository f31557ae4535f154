//! Why a call on the runtime port failed, folded into the few kinds callers act on: retry on
//! `Unavailable`, treat `NotFound` as already gone, back off on `DeadlineExceeded`.

/// A failed runtime call. Every variant names the operation (the upstream `operation_type`)
/// and carries the runtime's own words, so one log line tells what failed and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuntimeError {
    /// The object (sandbox, container, image) does not exist.
    #[error("runtime {operation}: not found: {message}")]
    NotFound {
        /// The operation that failed.
        operation: &'static str,
        /// What the runtime said.
        message: String,
    },
    /// The runtime cannot be reached (not running, socket gone, connection broken).
    #[error("runtime {operation}: runtime unavailable: {message}")]
    Unavailable {
        /// The operation that failed.
        operation: &'static str,
        /// What the runtime (or the adapter) said.
        message: String,
    },
    /// The call did not finish within its deadline.
    #[error("runtime {operation}: deadline exceeded: {message}")]
    DeadlineExceeded {
        /// The operation that failed.
        operation: &'static str,
        /// What the runtime (or the adapter) said.
        message: String,
    },
    /// The runtime rejected the request as malformed.
    #[error("runtime {operation}: invalid argument: {message}")]
    InvalidArgument {
        /// The operation that failed.
        operation: &'static str,
        /// What the runtime said.
        message: String,
    },
    /// The object to create exists already.
    #[error("runtime {operation}: already exists: {message}")]
    AlreadyExists {
        /// The operation that failed.
        operation: &'static str,
        /// What the runtime said.
        message: String,
    },
    /// The runtime does not implement the call.
    #[error("runtime {operation}: not implemented by the runtime: {message}")]
    Unimplemented {
        /// The operation that failed.
        operation: &'static str,
        /// What the runtime said.
        message: String,
    },
    /// The adapter answered with something that does not fit the call: a bug, never the
    /// runtime's fault.
    #[error("runtime {operation}: protocol error: {message}")]
    Protocol {
        /// The operation that failed.
        operation: &'static str,
        /// What did not fit.
        message: String,
    },
    /// Any other failure, with the runtime's status code.
    #[error("runtime {operation} failed ({code}): {message}")]
    Other {
        /// The operation that failed.
        operation: &'static str,
        /// The runtime's status code, by name.
        code: String,
        /// What the runtime said.
        message: String,
    },
}

impl RuntimeError {
    /// The operation that failed.
    #[must_use]
    pub fn operation(&self) -> &'static str {
        match self {
            Self::NotFound { operation, .. }
            | Self::Unavailable { operation, .. }
            | Self::DeadlineExceeded { operation, .. }
            | Self::InvalidArgument { operation, .. }
            | Self::AlreadyExists { operation, .. }
            | Self::Unimplemented { operation, .. }
            | Self::Protocol { operation, .. }
            | Self::Other { operation, .. } => operation,
        }
    }

    /// The runtime's (or the adapter's) own words.
    #[must_use]
    pub fn message(&self) -> &str {
        match self {
            Self::NotFound { message, .. }
            | Self::Unavailable { message, .. }
            | Self::DeadlineExceeded { message, .. }
            | Self::InvalidArgument { message, .. }
            | Self::AlreadyExists { message, .. }
            | Self::Unimplemented { message, .. }
            | Self::Protocol { message, .. }
            | Self::Other { message, .. } => message,
        }
    }

    /// True when the runtime could not be reached or did not answer in time: worth retrying
    /// later, and a sign the runtime itself is unhealthy.
    #[must_use]
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Self::Unavailable { .. } | Self::DeadlineExceeded { .. }
        )
    }
}
