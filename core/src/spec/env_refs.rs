//! Environment values read from config maps and secrets: one key (`configMapKeyRef`,
//! `secretKeyRef`) or every key (`envFrom`), with upstream's handling of `optional` and its
//! messages for what is missing.

use k8s_openapi::api::core::v1::EnvFromSource;

use crate::context::{ObjectError, ObjectKind, PodObjects};

/// Why an `envFrom` entry gives no variables: it names no source, or the object it names
/// cannot be used (missing and not optional, or unreadable).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvFromError {
    /// Neither `configMapRef` nor `secretRef` is set.
    #[error("names neither configMapRef nor secretRef")]
    NoSource,
    /// The object of the reference at `field` (`configMapRef`, `secretRef`) cannot be used.
    #[error("{error}")]
    Object {
        /// The field of the entry that names the object.
        field: &'static str,
        /// Why it cannot be used.
        error: ObjectError,
    },
}

impl EnvFromError {
    /// The field at fault, relative to the entry (empty for the entry as a whole).
    pub fn field(&self) -> &'static str {
        match self {
            EnvFromError::NoSource => "",
            EnvFromError::Object { field, .. } => field,
        }
    }
}

/// The value of `key` in object `name`; `Ok(None)` when it or the key is missing and the
/// reference is `optional` (the variable is then left out).
///
/// # Errors
/// The missing object or key ([`ObjectError::is_missing`]), worded as upstream, or why the
/// object cannot be read.
pub fn key_value(
    objects: &PodObjects,
    kind: ObjectKind,
    name: &str,
    key: &str,
    optional: bool,
    namespace: &str,
) -> Result<Option<String>, ObjectError> {
    let Some(data) = objects.lookup(kind, name)? else {
        return missing(
            optional,
            ObjectError::NotFound {
                kind,
                name: name.to_owned(),
            },
        );
    };
    match data.get(key) {
        Some(value) => Ok(Some(String::from_utf8_lossy(value).into_owned())),
        None => missing(
            optional,
            ObjectError::KeyNotFound {
                kind,
                namespace: namespace.to_owned(),
                name: name.to_owned(),
                key: key.to_owned(),
            },
        ),
    }
}

/// Nothing when the reference is optional, else `error`.
fn missing<T>(optional: bool, error: ObjectError) -> Result<Option<T>, ObjectError> {
    if optional {
        Ok(None)
    } else {
        Err(error)
    }
}

/// Every variable one `envFrom` entry gives, in key order, its prefix applied; keys that
/// cannot be variable names (empty, or holding `=`) are skipped as upstream does.
///
/// # Errors
/// [`EnvFromError`], naming the field of the entry at fault.
pub fn env_from(
    objects: &PodObjects,
    source: &EnvFromSource,
) -> Result<Vec<(String, String)>, EnvFromError> {
    let (kind, name, optional, field) = match (&source.config_map_ref, &source.secret_ref) {
        (Some(r), _) => (
            ObjectKind::ConfigMap,
            &r.name,
            r.optional.unwrap_or(false),
            "configMapRef",
        ),
        (None, Some(r)) => (
            ObjectKind::Secret,
            &r.name,
            r.optional.unwrap_or(false),
            "secretRef",
        ),
        (None, None) => return Err(EnvFromError::NoSource),
    };
    let failed = |error| EnvFromError::Object { field, error };
    let data = match objects.lookup(kind, name).map_err(failed)? {
        Some(data) => data,
        None if optional => return Ok(Vec::new()),
        None => {
            return Err(failed(ObjectError::NotFound {
                kind,
                name: name.to_owned(),
            }))
        }
    };
    let prefix = source.prefix.as_deref().unwrap_or_default();
    Ok(data
        .iter()
        .map(|(key, value)| {
            (
                format!("{prefix}{key}"),
                String::from_utf8_lossy(value).into_owned(),
            )
        })
        .filter(|(name, _)| !name.is_empty() && !name.contains('='))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMapEnvSource, SecretEnvSource};

    fn objects() -> PodObjects {
        let mut objects = PodObjects::managed();
        objects.insert(
            ObjectKind::ConfigMap,
            "cm",
            Some(
                [
                    ("A".to_owned(), b"1".to_vec()),
                    ("b=c".to_owned(), b"x".to_vec()),
                ]
                .into(),
            ),
        );
        objects.insert(ObjectKind::Secret, "gone", None);
        objects
    }

    #[test]
    fn keys_and_their_absence() {
        let objects = objects();
        let value = |name: &str, key: &str, optional: bool| {
            key_value(&objects, ObjectKind::ConfigMap, name, key, optional, "ns")
        };
        assert_eq!(value("cm", "A", false), Ok(Some("1".into())));
        assert_eq!(value("cm", "Z", true), Ok(None));
        assert_eq!(
            value("cm", "Z", false).unwrap_err().to_string(),
            "couldn't find key Z in ConfigMap ns/cm"
        );
        let gone = key_value(&objects, ObjectKind::Secret, "gone", "k", false, "ns").unwrap_err();
        assert!(gone.is_missing());
        assert_eq!(gone.to_string(), "secret \"gone\" not found");
        assert_eq!(
            key_value(&objects, ObjectKind::Secret, "gone", "k", true, "ns"),
            Ok(None)
        );
    }

    #[test]
    fn env_from_prefixes_and_skips() {
        let objects = objects();
        let from_cm = EnvFromSource {
            config_map_ref: Some(ConfigMapEnvSource {
                name: "cm".into(),
                optional: None,
            }),
            prefix: Some("P_".into()),
            secret_ref: None,
        };
        assert_eq!(
            env_from(&objects, &from_cm),
            Ok(vec![("P_A".into(), "1".into())])
        );
        let gone = |optional| EnvFromSource {
            secret_ref: Some(SecretEnvSource {
                name: "gone".into(),
                optional: Some(optional),
            }),
            ..Default::default()
        };
        assert_eq!(env_from(&objects, &gone(true)), Ok(vec![]));
        let error = env_from(&objects, &gone(false)).unwrap_err();
        assert_eq!(
            (error.field(), error.to_string().as_str()),
            ("secretRef", "secret \"gone\" not found")
        );
        assert_eq!(
            env_from(&objects, &EnvFromSource::default()),
            Err(EnvFromError::NoSource)
        );
    }
}
