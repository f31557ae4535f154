//! Environment values read from config maps and secrets: one key (`configMapKeyRef`,
//! `secretKeyRef`) or every key (`envFrom`), with upstream's handling of `optional` and its
//! messages for what is missing.

use k8s_openapi::api::core::v1::EnvFromSource;

use super::objects::{ObjectKind, PodObjects};

/// The value of `key` in object `name`; `Ok(None)` when it or the key is missing and the
/// reference is `optional` (the variable is then left out). The error is a reason naming the
/// missing object or key, as upstream words it.
pub fn key_value(
    objects: &PodObjects,
    kind: ObjectKind,
    name: &str,
    key: &str,
    optional: bool,
    namespace: &str,
) -> Result<Option<String>, String> {
    let Some(data) = objects.lookup(kind, name)? else {
        return missing(optional, format!("{} {name:?} not found", kind.noun()));
    };
    match data.get(key) {
        Some(value) => Ok(Some(String::from_utf8_lossy(value).into_owned())),
        None => missing(
            optional,
            format!(
                "couldn't find key {key} in {} {namespace}/{name}",
                kind.kind()
            ),
        ),
    }
}

fn missing<T>(optional: bool, reason: String) -> Result<Option<T>, String> {
    if optional {
        Ok(None)
    } else {
        Err(reason)
    }
}

/// Every variable one `envFrom` entry gives, in key order, its prefix applied; keys that
/// cannot be variable names (empty, or holding `=`) are skipped as upstream does. The error is
/// `(field, reason)`, the field relative to the entry.
pub fn env_from(
    objects: &PodObjects,
    source: &EnvFromSource,
) -> Result<Vec<(String, String)>, (&'static str, String)> {
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
        (None, None) => return Err(("", "names neither configMapRef nor secretRef".into())),
    };
    let data = match objects.lookup(kind, name).map_err(|r| (field, r))? {
        Some(data) => data,
        None if optional => return Ok(Vec::new()),
        None => return Err((field, format!("{} {name:?} not found", kind.noun()))),
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
            value("cm", "Z", false),
            Err("couldn't find key Z in ConfigMap ns/cm".into())
        );
        assert_eq!(
            key_value(&objects, ObjectKind::Secret, "gone", "k", false, "ns"),
            Err("secret \"gone\" not found".into())
        );
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
        assert_eq!(
            env_from(&objects, &gone(false)),
            Err(("secretRef", "secret \"gone\" not found".into()))
        );
        assert!(env_from(&objects, &EnvFromSource::default()).is_err());
    }
}
