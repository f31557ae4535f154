//! Mapping gRPC statuses to the runtime port's error.
//!
//! Callers (the adapter actor, PLEG, the pod workers) decide what to do by kind — retry on
//! `Unavailable`, treat `NotFound` as "already gone", back off on `DeadlineExceeded` — so the
//! gRPC code is folded into the port's [`RuntimeError`], which keeps the operation and the
//! runtime's own words for the logs.

use std::error::Error as _;

pub use sergeant_messages::runtime_error::RuntimeError as CriError;
use tonic::{Code, Status};

/// Maps a gRPC status of `operation` to a [`CriError`].
///
/// A status made by the client itself from a transport failure (it carries a source error,
/// which a status received from the runtime never does) counts as `Unavailable` even when
/// its code is `Unknown` or `Cancelled`: the call never got an answer from the runtime.
#[must_use]
pub fn from_status(operation: &'static str, status: &Status) -> CriError {
    let message = describe(status);
    let local_transport_failure = status.source().is_some();
    match status.code() {
        Code::NotFound => CriError::NotFound { operation, message },
        Code::Unavailable => CriError::Unavailable { operation, message },
        Code::Unknown | Code::Cancelled if local_transport_failure => {
            CriError::Unavailable { operation, message }
        }
        Code::DeadlineExceeded => CriError::DeadlineExceeded { operation, message },
        Code::InvalidArgument => CriError::InvalidArgument { operation, message },
        Code::AlreadyExists => CriError::AlreadyExists { operation, message },
        Code::Unimplemented => CriError::Unimplemented { operation, message },
        code => CriError::Other {
            operation,
            code: format!("{code:?}"),
            message,
        },
    }
}

/// Refines the error of pulling `image`: runtimes report a missing image or tag with a
/// generic code (containerd: `Unknown`, "... not found"), which becomes `NotFound` naming
/// the image.
#[must_use]
pub fn for_image_pull(error: CriError, image: &str) -> CriError {
    match error {
        CriError::Other {
            operation, message, ..
        } if message.contains("not found") => CriError::NotFound {
            operation,
            message: format!("image {image:?} not found: {message}"),
        },
        CriError::NotFound { operation, message } if !message.contains(image) => {
            CriError::NotFound {
                operation,
                message: format!("image {image:?} not found: {message}"),
            }
        }
        other => other,
    }
}

/// The status message followed by its chain of causes (transport errors hide the useful part,
/// like "No such file or directory", in the sources).
fn describe(status: &Status) -> String {
    let mut message = status.message().to_string();
    let mut source = status.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !cause_text.is_empty() && !message.contains(&cause_text) {
            if message.is_empty() {
                message = cause_text;
            } else {
                message = format!("{message}: {cause_text}");
            }
        }
        source = cause.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_map_to_kinds() {
        let e = from_status("version", &Status::not_found("no such thing"));
        assert!(
            matches!(e, CriError::NotFound { operation: "version", ref message } if message == "no such thing")
        );
        let e = from_status("status", &Status::unavailable("down"));
        assert!(e.is_transient());
        let e = from_status("x", &Status::unimplemented("nope"));
        assert!(matches!(e, CriError::Unimplemented { .. }));
        let e = from_status("x", &Status::unknown("weird"));
        assert!(matches!(
            e,
            CriError::Other { ref code, .. } if code == "Unknown"
        ));
        assert_eq!(e.operation(), "x");
        assert_eq!(e.message(), "weird");
    }

    #[test]
    fn pull_not_found_names_the_image() {
        let e = from_status(
            "pull_image",
            &Status::unknown("failed to resolve reference \"r/x:1\": r/x:1: not found"),
        );
        let e = for_image_pull(e, "r/x:1");
        assert!(matches!(e, CriError::NotFound { .. }));
        assert!(e.to_string().contains("r/x:1"));
        let other = for_image_pull(
            from_status("pull_image", &Status::unknown("disk full")),
            "r/x:1",
        );
        assert!(matches!(other, CriError::Other { .. }));
    }
}
