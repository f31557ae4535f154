//! `PodObjects`: the API objects a pod's volumes, environment and image pulls refer to (config
//! maps, secrets, service account tokens), fetched by the async sync step and handed to the pure
//! builders, which therefore never talk to the API server themselves. [`references`] tells the
//! sync step what to fetch.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Container, Pod, VolumeProjection};

use super::object_error::ObjectError;
use super::services::LinkedService;

/// The service account a pod runs as when it names none, as the API server defaults it.
const DEFAULT_SERVICE_ACCOUNT: &str = "default";
/// The lifetime of a projected token that asks for none, as upstream defaults it (1 h).
const DEFAULT_TOKEN_SECONDS: i64 = 3600;

/// The two kinds of API object that hold keys a pod can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ObjectKind {
    /// A `ConfigMap` (`data` and `binaryData`).
    ConfigMap,
    /// A `Secret` (`data`).
    Secret,
}

impl ObjectKind {
    /// The lower-case name upstream's messages use (`configmap "x" not found`).
    pub fn noun(self) -> &'static str {
        match self {
            ObjectKind::ConfigMap => "configmap",
            ObjectKind::Secret => "secret",
        }
    }

    /// The API kind (`ConfigMap`), for messages about keys.
    pub fn kind(self) -> &'static str {
        match self {
            ObjectKind::ConfigMap => "ConfigMap",
            ObjectKind::Secret => "Secret",
        }
    }
}

/// One service account token a pod needs: who it is for, for whom and for how long. Tokens are
/// cached and rotated by this key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TokenKey {
    /// The service account the token is for.
    pub service_account: String,
    /// The audience asked for; empty means the API server's own.
    pub audience: String,
    /// The lifetime asked for, in seconds.
    pub expiration_seconds: i64,
}

/// The keys of one config map or secret, values as bytes (secrets are binary).
pub type ObjectData = BTreeMap<String, Vec<u8>>;

/// What the API server answered for every object a pod refers to. Built by the sync step
/// (empty in standalone mode, where every lookup fails with a precise reason).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodObjects {
    managed: bool,
    objects: BTreeMap<(ObjectKind, String), Result<Option<ObjectData>, ObjectError>>,
    /// The `type` of each secret read, by name (pull secrets are read by it).
    secret_types: BTreeMap<String, String>,
    tokens: BTreeMap<TokenKey, Result<String, ObjectError>>,
    /// The services the pod links to (see [`super::services`]), or why they could not be
    /// listed; `None` until the sync step lists them (and on a standalone node).
    services: Option<Result<Vec<LinkedService>, ObjectError>>,
}

impl PodObjects {
    /// The objects of a managed pod, to be filled with [`PodObjects::insert`] and
    /// [`PodObjects::insert_token`].
    #[must_use]
    pub fn managed() -> Self {
        PodObjects {
            managed: true,
            ..PodObjects::default()
        }
    }

    /// Records the keys of object `name` of `kind`; `None` records that it does not exist.
    pub fn insert(&mut self, kind: ObjectKind, name: &str, data: Option<ObjectData>) {
        self.objects.insert((kind, name.to_owned()), Ok(data));
    }

    /// Records the `type` of secret `name` (`kubernetes.io/dockerconfigjson`, say).
    pub fn insert_secret_type(&mut self, name: &str, secret_type: String) {
        self.secret_types.insert(name.to_owned(), secret_type);
    }

    /// The `type` of secret `name`, if it was read and has one.
    pub fn secret_type(&self, name: &str) -> Option<&str> {
        self.secret_types.get(name).map(String::as_str)
    }

    /// Records why object `name` of `kind` could not be read, so only what uses it fails.
    pub fn insert_failure(&mut self, kind: ObjectKind, name: &str, error: ObjectError) {
        self.objects.insert((kind, name.to_owned()), Err(error));
    }

    /// Records the token obtained for `key`, or why none was.
    pub fn insert_token(&mut self, key: TokenKey, token: Result<String, ObjectError>) {
        self.tokens.insert(key, token);
    }

    /// The keys of object `name`: `Ok(None)` when it does not exist.
    ///
    /// # Errors
    /// Why it cannot be read: a standalone node, an object the sync step did not fetch, or
    /// the API server's refusal or absence when it was read.
    pub fn lookup(&self, kind: ObjectKind, name: &str) -> Result<Option<&ObjectData>, ObjectError> {
        if !self.managed {
            return Err(ObjectError::Standalone);
        }
        match self.objects.get(&(kind, name.to_owned())) {
            Some(Ok(found)) => Ok(found.as_ref()),
            Some(Err(error)) => Err(error.clone()),
            None => Err(ObjectError::NotFetched {
                kind,
                name: name.to_owned(),
            }),
        }
    }

    /// Records the services the pod links to, or why they could not be listed.
    pub fn insert_services(&mut self, services: Result<Vec<LinkedService>, ObjectError>) {
        self.services = Some(services);
    }

    /// The services the pod links to: none on a standalone node or when none were listed.
    ///
    /// # Errors
    /// Why the listing failed.
    pub fn services(&self) -> Result<&[LinkedService], ObjectError> {
        match &self.services {
            Some(Ok(services)) => Ok(services),
            Some(Err(error)) => Err(error.clone()),
            None => Ok(&[]),
        }
    }

    /// The token obtained for `key`.
    ///
    /// # Errors
    /// Why there is none: a standalone node, a token the sync step did not obtain, or the
    /// API server's refusal or absence when it was requested.
    pub fn token(&self, key: &TokenKey) -> Result<&str, ObjectError> {
        if !self.managed {
            return Err(ObjectError::Standalone);
        }
        match self.tokens.get(key) {
            Some(Ok(token)) => Ok(token),
            Some(Err(error)) => Err(error.clone()),
            None => Err(ObjectError::TokenNotFetched {
                service_account: key.service_account.clone(),
            }),
        }
    }
}

/// Everything a pod refers to in the API: the config maps and secrets of its volumes and its
/// containers' environment, its image pull secrets, and the tokens of its projected volumes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct References {
    /// Config maps and secrets by kind and name.
    pub objects: BTreeSet<(ObjectKind, String)>,
    /// Service account tokens.
    pub tokens: BTreeSet<TokenKey>,
}

/// What `pod` refers to (pure: read from the spec alone).
#[must_use]
pub fn references(pod: &Pod) -> References {
    let mut refs = References::default();
    let Some(spec) = pod.spec.as_ref() else {
        return refs;
    };
    let account = service_account(pod);
    let mut add = |kind: ObjectKind, name: &str| {
        refs.objects.insert((kind, name.to_owned()));
    };
    // An unnamed entry passes API validation; upstream ignores it, and so does this.
    for pull in spec.image_pull_secrets.iter().flatten() {
        if !pull.name.is_empty() {
            add(ObjectKind::Secret, &pull.name);
        }
    }
    for volume in spec.volumes.iter().flatten() {
        if let Some(source) = &volume.config_map {
            add(ObjectKind::ConfigMap, &source.name);
        }
        if let Some(source) = &volume.secret {
            add(
                ObjectKind::Secret,
                source.secret_name.as_deref().unwrap_or_default(),
            );
        }
        for projection in volume
            .projected
            .iter()
            .flat_map(|p| p.sources.iter().flatten())
        {
            projection_refs(projection, &account, &mut add, &mut refs.tokens);
        }
    }
    let containers = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten());
    for container in containers {
        container_refs(container, &mut add);
    }
    refs
}

fn projection_refs(
    projection: &VolumeProjection,
    service_account: &str,
    add: &mut impl FnMut(ObjectKind, &str),
    tokens: &mut BTreeSet<TokenKey>,
) {
    if let Some(source) = &projection.config_map {
        add(ObjectKind::ConfigMap, &source.name);
    }
    if let Some(source) = &projection.secret {
        add(ObjectKind::Secret, &source.name);
    }
    if let Some(source) = &projection.service_account_token {
        tokens.insert(token_key(service_account, source));
    }
}

/// The token key of a projected `serviceAccountToken` source of a pod running as
/// `service_account`.
pub fn token_key(
    service_account: &str,
    source: &k8s_openapi::api::core::v1::ServiceAccountTokenProjection,
) -> TokenKey {
    TokenKey {
        service_account: service_account.to_owned(),
        audience: source.audience.clone().unwrap_or_default(),
        expiration_seconds: source.expiration_seconds.unwrap_or(DEFAULT_TOKEN_SECONDS),
    }
}

/// The service account `pod` runs as.
pub fn service_account(pod: &Pod) -> String {
    pod.spec
        .as_ref()
        .and_then(|s| s.service_account_name.clone())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| DEFAULT_SERVICE_ACCOUNT.to_owned())
}

fn container_refs(container: &Container, add: &mut impl FnMut(ObjectKind, &str)) {
    for source in container.env_from.iter().flatten() {
        if let Some(r) = &source.config_map_ref {
            add(ObjectKind::ConfigMap, &r.name);
        }
        if let Some(r) = &source.secret_ref {
            add(ObjectKind::Secret, &r.name);
        }
    }
    for source in container
        .env
        .iter()
        .flatten()
        .filter_map(|v| v.value_from.as_ref())
    {
        if let Some(r) = &source.config_map_key_ref {
            add(ObjectKind::ConfigMap, &r.name);
        }
        if let Some(r) = &source.secret_key_ref {
            add(ObjectKind::Secret, &r.name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::pod_with;

    #[test]
    fn references_cover_volumes_projections_and_env() {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web", "namespace": "ns", "uid": "uid-1"},
            "spec": {
                "serviceAccountName": "robot",
                "imagePullSecrets": [{"name": "s-pull"}, {"name": ""}],
                "volumes": [
                    {"name": "a", "configMap": {"name": "cm-a"}},
                    {"name": "b", "secret": {"secretName": "s-b"}},
                    {"name": "c", "projected": {"sources": [
                        {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
                        {"configMap": {"name": "kube-root-ca.crt"}},
                        {"secret": {"name": "s-c"}}
                    ]}}
                ],
                "initContainers": [{"name": "i", "envFrom": [{"secretRef": {"name": "s-env"}}]}],
                "containers": [{"name": "c", "env": [
                    {"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cm-env", "key": "k"}}},
                    {"name": "Y", "value": "literal"}
                ]}]
            }
        }))
        .unwrap();
        let refs = references(&pod);
        let names: Vec<String> = refs
            .objects
            .iter()
            .map(|(kind, name)| format!("{}/{name}", kind.noun()))
            .collect();
        assert_eq!(
            names,
            [
                "configmap/cm-a",
                "configmap/cm-env",
                "configmap/kube-root-ca.crt",
                "secret/s-b",
                "secret/s-c",
                "secret/s-env",
                "secret/s-pull"
            ]
        );
        let token: Vec<&TokenKey> = refs.tokens.iter().collect();
        assert_eq!(
            token,
            [&TokenKey {
                service_account: "robot".into(),
                audience: String::new(),
                expiration_seconds: 3607
            }]
        );
        assert_eq!(service_account(&pod), "robot");
        assert_eq!(service_account(&pod_with(vec![], vec![])), "default");
        assert_eq!(references(&pod_with(vec![], vec![])), References::default());
    }

    #[test]
    fn lookups_tell_missing_from_standalone() {
        let standalone = PodObjects::default();
        let error = standalone.lookup(ObjectKind::Secret, "s").unwrap_err();
        assert_eq!(error, ObjectError::Standalone);
        assert!(error.to_string().contains("standalone"));
        let mut objects = PodObjects::managed();
        objects.insert(ObjectKind::Secret, "gone", None);
        objects.insert(
            ObjectKind::ConfigMap,
            "cm",
            Some([("k".to_owned(), b"v".to_vec())].into()),
        );
        assert_eq!(objects.lookup(ObjectKind::Secret, "gone"), Ok(None));
        assert_eq!(objects.secret_type("gone"), None);
        objects.insert_secret_type("pull", "kubernetes.io/dockercfg".into());
        assert_eq!(objects.secret_type("pull"), Some("kubernetes.io/dockercfg"));
        assert_eq!(
            objects
                .lookup(ObjectKind::ConfigMap, "cm")
                .unwrap()
                .unwrap()["k"],
            b"v"
        );
        assert_eq!(
            objects
                .lookup(ObjectKind::ConfigMap, "other")
                .unwrap_err()
                .to_string(),
            "configmap \"other\" was not fetched"
        );
        let key = TokenKey {
            service_account: "default".into(),
            audience: String::new(),
            expiration_seconds: 3600,
        };
        assert_eq!(
            objects.token(&key).unwrap_err().to_string(),
            "no token for service account \"default\" was obtained"
        );
        objects.insert_token(key.clone(), Ok("jwt".into()));
        assert_eq!(objects.token(&key), Ok("jwt"));
        let refused = ObjectError::NoTokenInAnswer {
            namespace: "ns".into(),
            service_account: "default".into(),
        };
        objects.insert_token(key.clone(), Err(refused.clone()));
        assert_eq!(objects.token(&key), Err(refused.clone()));
        objects.insert_failure(ObjectKind::Secret, "gone", refused.clone());
        assert_eq!(objects.lookup(ObjectKind::Secret, "gone"), Err(refused));
    }
}
