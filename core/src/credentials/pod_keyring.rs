//! The keyring of one pod: the credentials of its `spec.imagePullSecrets`, in their order, out
//! of the secrets the sync step fetched — and which of them gave nothing, and why.

use k8s_openapi::api::core::v1::Pod;

use super::docker_config::{add_secret, PullSecretError};
use super::keyring::Keyring;
use crate::context::{ObjectError, ObjectKind, PodObjects};

/// Why one of a pod's pull secrets gives no credentials at all; upstream pulls without it and
/// says so in an event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretUnavailable {
    /// The secret does not exist.
    #[error("secret {namespace}/{name} not found")]
    NotFound {
        /// The pod's namespace.
        namespace: String,
        /// The secret.
        name: String,
    },
    /// It could not be read (forbidden, the API server away, a standalone node).
    #[error(transparent)]
    Unreadable(#[from] ObjectError),
}

/// A pod's pull credentials and what went wrong reading them.
#[derive(Debug, Default)]
pub struct PodKeyring {
    /// The credentials of every usable secret.
    pub keyring: Keyring,
    /// The secrets that could not be read (missing, forbidden, standalone node), each with
    /// why; upstream pulls without them and says so in an event.
    pub unavailable: Vec<(String, SecretUnavailable)>,
    /// The malformed parts of the secrets that were read, skipped.
    pub malformed: Vec<PullSecretError>,
}

impl PodKeyring {
    /// The keyring of `pod` from `objects` (pure: reads only what the sync fetched).
    #[must_use]
    pub fn of(pod: &Pod, objects: &PodObjects) -> Self {
        let namespace = pod.metadata.namespace.as_deref().unwrap_or("default");
        let mut ring = PodKeyring::default();
        let names = pod
            .spec
            .iter()
            .flat_map(|s| s.image_pull_secrets.iter().flatten())
            .map(|r| r.name.as_str())
            .filter(|name| !name.is_empty());
        for name in names {
            match objects.lookup(ObjectKind::Secret, name) {
                Ok(Some(data)) => {
                    let secret = format!("{namespace}/{name}");
                    let secret_type = objects.secret_type(name);
                    let errors = add_secret(&mut ring.keyring, &secret, secret_type, data);
                    ring.malformed.extend(errors);
                }
                Ok(None) => ring.unavailable.push((
                    name.to_owned(),
                    SecretUnavailable::NotFound {
                        namespace: namespace.to_owned(),
                        name: name.to_owned(),
                    },
                )),
                Err(error) => ring.unavailable.push((name.to_owned(), error.into())),
            }
        }
        ring
    }
}

#[cfg(test)]
mod tests {
    use super::super::docker_config::DOCKER_CONFIG_JSON;
    use super::super::reference::repository;
    use super::*;

    fn pod(pull_secrets: &[&str]) -> Pod {
        let refs: Vec<_> = pull_secrets
            .iter()
            .map(|name| serde_json::json!({ "name": name }))
            .collect();
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web", "namespace": "ns", "uid": "uid-1"},
            "spec": {"imagePullSecrets": refs, "containers": [{"name": "c"}]}
        }))
        .unwrap()
    }

    fn secret(user: &str) -> crate::context::ObjectData {
        let config =
            format!(r#"{{"auths": {{"quay.io": {{"username": "{user}", "password": "p"}}}}}}"#);
        [(".dockerconfigjson".to_owned(), config.into_bytes())].into()
    }

    #[test]
    fn secrets_count_in_order_and_the_unusable_are_named() {
        let mut objects = PodObjects::managed();
        for (name, user) in [("first", "one"), ("second", "two")] {
            objects.insert(ObjectKind::Secret, name, Some(secret(user)));
            objects.insert_secret_type(name, DOCKER_CONFIG_JSON.to_owned());
        }
        objects.insert(ObjectKind::Secret, "gone", None);
        let forbidden = ObjectError::Api {
            request: crate::context::ApiRequest::Read {
                kind: ObjectKind::Secret,
                namespace: "ns".into(),
                name: "denied".into(),
            },
            failure: crate::context::ApiFailure {
                kind: crate::context::ApiFailureKind::Forbidden,
                message: "forbidden".into(),
            },
        };
        objects.insert_failure(ObjectKind::Secret, "denied", forbidden.clone());
        objects.insert(ObjectKind::Secret, "untyped", Some(secret("three")));
        let pod = pod(&["second", "gone", "", "first", "denied", "untyped"]);
        let ring = PodKeyring::of(&pod, &objects);
        let users: Vec<&str> = ring
            .keyring
            .lookup(&repository("quay.io/a/b"))
            .iter()
            .map(|c| c.username.as_str())
            .collect();
        assert_eq!(users, ["two", "one"]);
        let unavailable: Vec<(&str, String)> = ring
            .unavailable
            .iter()
            .map(|(name, why)| (name.as_str(), why.to_string()))
            .collect();
        assert_eq!(
            unavailable,
            [
                ("gone", "secret ns/gone not found".to_owned()),
                ("denied", "reading secret ns/denied: forbidden".to_owned())
            ]
        );
        assert_eq!(
            ring.unavailable[1].1,
            SecretUnavailable::Unreadable(forbidden)
        );
        assert_eq!(ring.malformed.len(), 1);
        assert_eq!(
            (
                ring.malformed[0].secret.as_str(),
                ring.malformed[0].field.as_str()
            ),
            ("ns/untyped", "type")
        );
    }

    #[test]
    fn a_standalone_node_reads_no_pull_secret() {
        let ring = PodKeyring::of(&pod(&["s"]), &PodObjects::default());
        assert!(ring.keyring.lookup(&repository("quay.io/a")).is_empty());
        assert_eq!(ring.unavailable.len(), 1);
        assert_eq!(
            ring.unavailable[0].1,
            SecretUnavailable::Unreadable(ObjectError::Standalone)
        );
        let none = PodKeyring::of(&pod(&[]), &PodObjects::default());
        assert!(none.unavailable.is_empty() && none.malformed.is_empty());
    }
}
