//! `ObjectError`: why a config map, secret, service account token or the list of services a pod
//! refers to cannot be used — the object or key is missing, the node cannot read it, or the
//! API server refused or could not be reached — with what was asked and how it failed, so the
//! pod's sync tells "missing" (which an `optional` reference skips) from "cannot read".

use std::fmt;

use super::objects::ObjectKind;

/// One request the sync step made to the API server for a pod's objects; its text names the
/// request in messages (`reading configmap ns/cm`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiRequest {
    /// Reading a config map or secret.
    Read {
        /// Config map or secret.
        kind: ObjectKind,
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
    /// Requesting a token of a service account (TokenRequest).
    Token {
        /// The service account's namespace (the pod's).
        namespace: String,
        /// The service account.
        service_account: String,
    },
    /// Listing the services of a namespace, for the pod's service variables.
    ListServices {
        /// The pod's namespace.
        namespace: String,
    },
    /// Reading one service (the API server's own, `default/kubernetes`).
    ReadService {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
}

impl fmt::Display for ApiRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiRequest::Read {
                kind,
                namespace,
                name,
            } => write!(f, "reading {} {namespace}/{name}", kind.noun()),
            ApiRequest::Token {
                namespace,
                service_account,
            } => write!(
                f,
                "requesting a token of service account {namespace}/{service_account}"
            ),
            ApiRequest::ListServices { namespace } => {
                write!(f, "listing the services of namespace {namespace}")
            }
            ApiRequest::ReadService { namespace, name } => {
                write!(f, "reading service {namespace}/{name}")
            }
        }
    }
}

/// How the API server failed a request, as a caller tells the cases apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiFailureKind {
    /// Answered 404 Not Found.
    NotFound,
    /// Answered 403 Forbidden (for longer than the Node authorizer takes to learn of a new
    /// binding): the node may not read it.
    Forbidden,
    /// Answered with another error status (its HTTP code).
    Refused(u16),
    /// Not answered: the connection or the transport to the API server failed.
    Unreachable,
    /// Answered with something the client could not read, or the request could not be made.
    Other,
}

/// Why the API server gave no usable answer: the kind a caller branches on (refused, forbidden,
/// not reached) and the client's own words, which the message keeps.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ApiFailure {
    /// How it failed.
    pub kind: ApiFailureKind,
    /// The API client's text for it.
    pub message: String,
}

/// Why an object a pod refers to cannot be used. Kept with the objects the sync step fetched
/// (so it is `Clone`), and turned into the reason of the pod's `CreateContainerConfigError`
/// or `FailedMount` message, in upstream's words where upstream has them
/// (`configmap "cm" not found`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ObjectError {
    /// The config map or secret does not exist (and the reference is not optional).
    #[error("{} {name:?} not found", .kind.noun())]
    NotFound {
        /// Config map or secret.
        kind: ObjectKind,
        /// Its name.
        name: String,
    },
    /// The config map or secret exists but holds no such key (and the reference is not
    /// optional).
    #[error("couldn't find key {key} in {} {namespace}/{name}", .kind.kind())]
    KeyNotFound {
        /// Config map or secret.
        kind: ObjectKind,
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The key asked for.
        key: String,
    },
    /// The node is standalone: it has no API server to read anything from.
    #[error("needs the API server, which a standalone node does not have")]
    Standalone,
    /// The sync step did not fetch this config map or secret.
    #[error("{} {name:?} was not fetched", .kind.noun())]
    NotFetched {
        /// Config map or secret.
        kind: ObjectKind,
        /// Its name.
        name: String,
    },
    /// The sync step obtained no token for this service account.
    #[error("no token for service account {service_account:?} was obtained")]
    TokenNotFetched {
        /// The service account.
        service_account: String,
    },
    /// The API server refused the request or could not be reached.
    #[error("{request}: {failure}")]
    Api {
        /// What was asked.
        request: ApiRequest,
        /// How it failed.
        failure: ApiFailure,
    },
    /// The API server answered a token request without a token.
    #[error(
        "the token request of service account {namespace}/{service_account} was answered \
         without a token"
    )]
    NoTokenInAnswer {
        /// The service account's namespace.
        namespace: String,
        /// The service account.
        service_account: String,
    },
}

impl ObjectError {
    /// Whether the object or key does not exist (rather than could not be read): what an
    /// `optional` reference would have skipped.
    #[must_use]
    pub fn is_missing(&self) -> bool {
        matches!(
            self,
            ObjectError::NotFound { .. } | ObjectError::KeyNotFound { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_request_and_keep_upstreams_words() {
        let failed = ObjectError::Api {
            request: ApiRequest::Read {
                kind: ObjectKind::ConfigMap,
                namespace: "ns".into(),
                name: "cm".into(),
            },
            failure: ApiFailure {
                kind: ApiFailureKind::Forbidden,
                message: "forbidden".into(),
            },
        };
        assert_eq!(failed.to_string(), "reading configmap ns/cm: forbidden");
        assert!(!failed.is_missing());
        let missing = ObjectError::NotFound {
            kind: ObjectKind::Secret,
            name: "s".into(),
        };
        assert_eq!(missing.to_string(), "secret \"s\" not found");
        assert!(missing.is_missing());
        let token = ApiRequest::Token {
            namespace: "ns".into(),
            service_account: "default".into(),
        };
        assert_eq!(
            token.to_string(),
            "requesting a token of service account ns/default"
        );
    }
}
