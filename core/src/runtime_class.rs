//! Which runtime handler runs a pod's sandbox: the `handler` of the RuntimeClass its
//! `spec.runtimeClassName` names, looked up in the API server's RuntimeClasses as upstream's
//! RuntimeClass manager does (the lookup itself is `sergeant-kube-api`'s). Entry point:
//! [`requested`], and [`RuntimeClassError`] for a name that cannot be resolved.
//!
//! A pod that names a RuntimeClass asks for what that handler gives it (another sandbox
//! technology, a VM — Hyper-V isolation on Windows); running it on the default handler
//! instead would take that away without a word. So a name that cannot be resolved stops the
//! pod's sandbox from being made, with the reason, until it can.

use k8s_openapi::api::core::v1::Pod;

/// The RuntimeClass `pod` names; `None` for the default handler (no name, or an empty one, as
/// upstream).
#[must_use]
pub fn requested(pod: &Pod) -> Option<&str> {
    pod.spec
        .as_ref()?
        .runtime_class_name
        .as_deref()
        .filter(|name| !name.is_empty())
}

/// Why the RuntimeClass a pod names gives no handler now.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuntimeClassError {
    /// No RuntimeClass of that name exists (upstream's words: the API server's NotFound).
    #[error("runtimeclass.node.k8s.io \"{0}\" not found")]
    NotFound(String),
    /// The node's view of the RuntimeClasses is not there yet (their first list is not in);
    /// a later sync looks again.
    #[error("failed to lookup RuntimeClass {name}: {reason}")]
    Unavailable {
        /// The name the pod gives.
        name: String,
        /// What is missing.
        reason: &'static str,
    },
    /// The node runs standalone: no API server holds RuntimeClasses to resolve the name by.
    #[error(
        "RuntimeClass {0:?} cannot be resolved without an API server (standalone node); the \
         pod is not run on the default runtime handler instead"
    )]
    Standalone(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::PodSpec;

    fn pod_naming(name: Option<&str>) -> Pod {
        Pod {
            spec: Some(PodSpec {
                runtime_class_name: name.map(str::to_owned),
                ..PodSpec::default()
            }),
            ..Pod::default()
        }
    }

    #[test]
    fn a_named_class_is_requested_and_no_name_or_an_empty_one_is_the_default() {
        assert_eq!(requested(&pod_naming(Some("kata"))), Some("kata"));
        assert_eq!(requested(&pod_naming(Some(""))), None);
        assert_eq!(requested(&pod_naming(None)), None);
        assert_eq!(requested(&Pod::default()), None);
    }

    #[test]
    fn a_missing_class_reads_as_the_api_servers_not_found() {
        assert_eq!(
            RuntimeClassError::NotFound("kata".to_owned()).to_string(),
            "runtimeclass.node.k8s.io \"kata\" not found"
        );
    }
}
