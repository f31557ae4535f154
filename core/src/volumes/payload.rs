//! The files of the volumes whose content comes from the API or the pod itself — `configMap`,
//! `secret`, `downwardAPI`, `projected` — computed from the spec and the objects the sync step
//! fetched: `items` (key → path), `defaultMode` and per-item `mode`, `optional`. Pure.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{DownwardAPIVolumeFile, KeyToPath, Volume, VolumeProjection};

use crate::context::{
    field_value, resource_value, service_account, token_key, EnvSources, ObjectError, ObjectKind,
    ResourceRefError,
};

/// One file of a payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileContent {
    /// Its bytes.
    pub data: Vec<u8>,
    /// Its permission bits (`0o644`).
    pub mode: u32,
}

/// The files of a volume by relative path (`key`, `dir/key`).
pub type Payload = BTreeMap<String, FileContent>;

/// The mode of a file when the volume gives none, as upstream.
const DEFAULT_MODE: i32 = 0o644;

/// Why the files of an API-backed volume cannot be computed: an object, key or token it
/// needs is missing or unreadable, or a source or downward API item cannot be answered. Its
/// text is the reason of the volume's [`VolumeError`](super::VolumeError) and so of the pod's
/// `FailedMount` event, in upstream's words where upstream has them
/// (`configmap "cm" not found`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    /// A config map, secret or token the volume needs is missing (and not optional) or
    /// cannot be read.
    #[error(transparent)]
    Object(#[from] ObjectError),
    /// A projected source of a kind the node does not know.
    #[error(
        "a projected source other than configMap, secret, downwardAPI or serviceAccountToken \
         is not supported"
    )]
    UnsupportedProjection,
    /// A downward API item names neither a field nor a resource.
    #[error("{path}: names neither fieldRef nor resourceFieldRef")]
    NoDownwardSource {
        /// The item's path in the volume.
        path: String,
    },
    /// A downward API item names a pod field the node cannot supply.
    #[error("{path}: {field:?} is not a field the node can supply")]
    UnknownField {
        /// The item's path in the volume.
        path: String,
        /// The field path it names.
        field: String,
    },
    /// A downward API item's `resourceFieldRef` cannot be answered.
    #[error("{path}: {error}")]
    Resource {
        /// The item's path in the volume.
        path: String,
        /// Why.
        error: ResourceRefError,
    },
}

/// The files of `volume`, an API-backed volume.
///
/// # Errors
/// [`PayloadError`] naming the missing object, key or unsupported source.
pub fn volume_payload(volume: &Volume, sources: &EnvSources<'_>) -> Result<Payload, PayloadError> {
    let mut out = Payload::new();
    if let Some(source) = &volume.config_map {
        let keyed = Keyed::new(
            ObjectKind::ConfigMap,
            &source.name,
            &source.items,
            source.optional,
        );
        keyed.add(sources, mode(source.default_mode), &mut out)?;
    } else if let Some(source) = &volume.secret {
        let name = source.secret_name.as_deref().unwrap_or_default();
        let keyed = Keyed::new(ObjectKind::Secret, name, &source.items, source.optional);
        keyed.add(sources, mode(source.default_mode), &mut out)?;
    } else if let Some(source) = &volume.downward_api {
        let items = source.items.as_deref().unwrap_or_default();
        add_downward(sources, items, mode(source.default_mode), &mut out)?;
    } else if let Some(source) = &volume.projected {
        let default_mode = mode(source.default_mode);
        for projection in source.sources.iter().flatten() {
            add_projection(sources, projection, default_mode, &mut out)?;
        }
    }
    Ok(out)
}

/// A permission mode from the spec, limited to the permission bits.
fn mode(given: Option<i32>) -> u32 {
    u32::try_from(given.unwrap_or(DEFAULT_MODE)).unwrap_or(0o644) & 0o777
}

/// A config map or secret as a volume or projection source.
struct Keyed<'a> {
    kind: ObjectKind,
    name: &'a str,
    items: Option<&'a [KeyToPath]>,
    optional: bool,
}

impl<'a> Keyed<'a> {
    fn new(
        kind: ObjectKind,
        name: &'a str,
        items: &'a Option<Vec<KeyToPath>>,
        optional: Option<bool>,
    ) -> Self {
        Keyed {
            kind,
            name,
            items: items.as_deref(),
            optional: optional.unwrap_or(false),
        }
    }

    /// Adds every key as a file (or only `items`, at their paths).
    fn add(
        &self,
        sources: &EnvSources<'_>,
        default_mode: u32,
        out: &mut Payload,
    ) -> Result<(), PayloadError> {
        let (kind, name) = (self.kind, self.name);
        let Some(data) = sources.objects.lookup(kind, name)? else {
            return if self.optional {
                Ok(())
            } else {
                Err(ObjectError::NotFound {
                    kind,
                    name: name.to_owned(),
                }
                .into())
            };
        };
        let file = |data: &[u8], mode: u32| FileContent {
            data: data.to_vec(),
            mode,
        };
        let Some(items) = self.items.filter(|items| !items.is_empty()) else {
            out.extend(
                data.iter()
                    .map(|(key, value)| (key.clone(), file(value, default_mode))),
            );
            return Ok(());
        };
        for item in items {
            match data.get(&item.key) {
                Some(value) => {
                    let item_mode = item.mode.map_or(default_mode, |m| mode(Some(m)));
                    out.insert(item.path.clone(), file(value, item_mode));
                }
                None if self.optional => {}
                None => {
                    return Err(ObjectError::KeyNotFound {
                        kind,
                        namespace: sources.id.namespace.clone(),
                        name: name.to_owned(),
                        key: item.key.clone(),
                    }
                    .into())
                }
            }
        }
        Ok(())
    }
}

fn add_projection(
    sources: &EnvSources<'_>,
    projection: &VolumeProjection,
    default_mode: u32,
    out: &mut Payload,
) -> Result<(), PayloadError> {
    let keyed = match (&projection.config_map, &projection.secret) {
        (Some(s), _) => Some(Keyed::new(
            ObjectKind::ConfigMap,
            &s.name,
            &s.items,
            s.optional,
        )),
        (None, Some(s)) => Some(Keyed::new(
            ObjectKind::Secret,
            &s.name,
            &s.items,
            s.optional,
        )),
        (None, None) => None,
    };
    if let Some(keyed) = keyed {
        return keyed.add(sources, default_mode, out);
    }
    if let Some(source) = &projection.downward_api {
        let items = source.items.as_deref().unwrap_or_default();
        return add_downward(sources, items, default_mode, out);
    }
    if let Some(source) = &projection.service_account_token {
        let key = token_key(&service_account(sources.pod), source);
        let token = sources.objects.token(&key)?;
        out.insert(
            source.path.clone(),
            FileContent {
                data: token.as_bytes().to_vec(),
                mode: default_mode,
            },
        );
        return Ok(());
    }
    Err(PayloadError::UnsupportedProjection)
}

/// Adds the downward-API files: pod fields (the whole `metadata.labels` and
/// `metadata.annotations` maps as `key="value"` lines) and container resources.
fn add_downward(
    sources: &EnvSources<'_>,
    items: &[DownwardAPIVolumeFile],
    default_mode: u32,
    out: &mut Payload,
) -> Result<(), PayloadError> {
    for item in items {
        let path = || item.path.clone();
        let value = match (&item.field_ref, &item.resource_field_ref) {
            (Some(field_ref), _) => {
                field_value_of(sources, &field_ref.field_path).ok_or_else(|| {
                    PayloadError::UnknownField {
                        path: path(),
                        field: field_ref.field_path.clone(),
                    }
                })?
            }
            (None, Some(selector)) => resource_value(sources.pod, "", selector, sources.node)
                .map_err(|error| PayloadError::Resource {
                    path: path(),
                    error,
                })?,
            (None, None) => return Err(PayloadError::NoDownwardSource { path: path() }),
        };
        let item_mode = item.mode.map_or(default_mode, |m| mode(Some(m)));
        out.insert(
            item.path.clone(),
            FileContent {
                data: value.into_bytes(),
                mode: item_mode,
            },
        );
    }
    Ok(())
}

/// A pod field as a file: labels and annotations whole, or one value the node knows; `None`
/// for a field the node cannot supply.
fn field_value_of(sources: &EnvSources<'_>, path: &str) -> Option<String> {
    let meta = &sources.pod.metadata;
    match path {
        "metadata.labels" => Some(format_map(meta.labels.as_ref())),
        "metadata.annotations" => Some(format_map(meta.annotations.as_ref())),
        path => field_value(sources, path),
    }
}

/// `key="value"` lines in key order, the values quoted and escaped, no final newline — the
/// downward API's format for maps.
fn format_map(map: Option<&BTreeMap<String, String>>) -> String {
    map.into_iter()
        .flatten()
        .map(|(key, value)| format!("{key}={value:?}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{PodIdentity, PodObjects, TokenKey};
    use crate::testing::{node, pod_with, resources};
    use k8s_openapi::api::core::v1::Pod;
    use std::path::PathBuf;

    fn objects() -> PodObjects {
        let mut objects = PodObjects::managed();
        let data = [("a", "1"), ("b", "2")]
            .map(|(k, v)| (k.to_owned(), v.as_bytes().to_vec()))
            .into();
        objects.insert(ObjectKind::ConfigMap, "cm", Some(data));
        objects.insert(
            ObjectKind::Secret,
            "s",
            Some([("pw".to_owned(), vec![0, 1])].into()),
        );
        objects.insert(ObjectKind::ConfigMap, "gone", None);
        objects.insert_token(
            TokenKey {
                service_account: "default".into(),
                audience: String::new(),
                expiration_seconds: 3607,
            },
            Ok("jwt".into()),
        );
        objects
    }

    fn payload_of(volume: serde_json::Value) -> Result<Vec<(String, String, u32)>, PayloadError> {
        let mut pod: Pod = pod_with(vec![resources("c", &[], &[("memory", "32Mi")])], vec![]);
        pod.metadata.labels = Some(
            [("app", "web"), ("tier", "a\"b")]
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .into(),
        );
        let id = PodIdentity::of(&pod).unwrap();
        let node = node(PathBuf::from("/r"));
        let objects = objects();
        let sources = EnvSources {
            pod: &pod,
            id: &id,
            node: &node,
            pod_ip: None,
            objects: &objects,
        };
        let volume: Volume = serde_json::from_value(volume).unwrap();
        Ok(volume_payload(&volume, &sources)?
            .into_iter()
            .map(|(path, f)| (path, String::from_utf8_lossy(&f.data).into_owned(), f.mode))
            .collect())
    }

    fn files(list: &[(&str, &str, u32)]) -> Vec<(String, String, u32)> {
        list.iter()
            .map(|(p, d, m)| ((*p).to_owned(), (*d).to_owned(), *m))
            .collect()
    }

    #[test]
    fn config_maps_and_secrets_with_items_and_modes() {
        let all = payload_of(serde_json::json!({"name": "v", "configMap": {"name": "cm"}}));
        assert_eq!(all, Ok(files(&[("a", "1", 0o644), ("b", "2", 0o644)])));
        let items = payload_of(serde_json::json!({"name": "v", "configMap": {
            "name": "cm", "defaultMode": 0o600,
            "items": [{"key": "a", "path": "dir/x"}, {"key": "b", "path": "y", "mode": 0o400}]
        }}));
        assert_eq!(
            items,
            Ok(files(&[("dir/x", "1", 0o600), ("y", "2", 0o400)]))
        );
        let secret = payload_of(serde_json::json!({"name": "v", "secret": {"secretName": "s"}}));
        assert_eq!(secret, Ok(files(&[("pw", "\u{0}\u{1}", 0o644)])));
        let missing_key = payload_of(serde_json::json!({"name": "v", "configMap": {
            "name": "cm", "items": [{"key": "z", "path": "z"}]
        }}));
        assert_eq!(
            missing_key.unwrap_err().to_string(),
            "couldn't find key z in ConfigMap ns/cm"
        );
        let optional_key = payload_of(serde_json::json!({"name": "v", "configMap": {
            "name": "cm", "optional": true, "items": [{"key": "z", "path": "z"}]
        }}));
        assert_eq!(optional_key, Ok(vec![]));
        let gone = payload_of(serde_json::json!({"name": "v", "configMap": {"name": "gone"}}));
        assert_eq!(
            gone,
            Err(PayloadError::Object(ObjectError::NotFound {
                kind: ObjectKind::ConfigMap,
                name: "gone".into()
            }))
        );
        assert_eq!(
            gone.unwrap_err().to_string(),
            "configmap \"gone\" not found"
        );
        let optional = payload_of(
            serde_json::json!({"name": "v", "configMap": {"name": "gone", "optional": true}}),
        );
        assert_eq!(optional, Ok(vec![]));
    }

    #[test]
    fn downward_api_and_projections() {
        let downward = payload_of(serde_json::json!({"name": "v", "downwardAPI": {"items": [
            {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}},
            {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}, "mode": 0o444},
            {"path": "app", "fieldRef": {"fieldPath": "metadata.labels['app']"}},
            {"path": "mem", "resourceFieldRef": {"containerName": "c", "resource": "limits.memory", "divisor": "1Mi"}}
        ]}}));
        assert_eq!(
            downward,
            Ok(files(&[
                ("app", "web", 0o644),
                ("labels", "app=\"web\"\ntier=\"a\\\"b\"", 0o444),
                ("mem", "32", 0o644),
                ("name", "web", 0o644)
            ]))
        );
        let projected = payload_of(serde_json::json!({"name": "kube-api-access", "projected": {
            "defaultMode": 0o640,
            "sources": [
                {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
                {"configMap": {"name": "cm", "items": [{"key": "a", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"fieldPath": "metadata.namespace"}}]}}
            ]
        }}));
        assert_eq!(
            projected,
            Ok(files(&[
                ("ca.crt", "1", 0o640),
                ("namespace", "ns", 0o640),
                ("token", "jwt", 0o640)
            ]))
        );
        let other_token = payload_of(serde_json::json!({"name": "v", "projected": {"sources": [
            {"serviceAccountToken": {"path": "t", "audience": "vault"}}
        ]}}));
        assert!(other_token.unwrap_err().to_string().contains("no token"));
        let unknown = payload_of(serde_json::json!({"name": "v", "downwardAPI": {"items": [
            {"path": "x", "fieldRef": {"fieldPath": "spec.nothing"}}
        ]}}));
        assert_eq!(
            unknown.unwrap_err().to_string(),
            "x: \"spec.nothing\" is not a field the node can supply"
        );
    }
}
