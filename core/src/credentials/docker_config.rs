//! Registry credentials out of a pull secret, in its two formats as upstream reads them: type
//! `kubernetes.io/dockerconfigjson`, key `.dockerconfigjson`, `{"auths": {LOCATION: ENTRY}}`;
//! and the legacy type `kubernetes.io/dockercfg`, key `.dockercfg`, `{LOCATION: ENTRY}`. An
//! entry has `username` and `password`, or `auth` (base64 of `username:password`, padded or
//! not), which wins.
//!
//! What is malformed is an error naming the secret and the field, and only that part is
//! skipped: the other entries of the same secret still count.

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;

use super::keyring::{Credential, Keyring};
use crate::context::ObjectData;

/// The secret type of the current format.
pub const DOCKER_CONFIG_JSON: &str = "kubernetes.io/dockerconfigjson";
/// The secret type of the legacy format.
pub const DOCKER_CFG: &str = "kubernetes.io/dockercfg";

/// Why part of a pull secret gives no credential.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("image pull secret {secret}: {field}: {reason}")]
pub struct PullSecretError {
    /// The secret, `namespace/name`.
    pub secret: String,
    /// The field at fault (`data[.dockerconfigjson].auths["quay.io"].auth`).
    pub field: String,
    /// What is wrong with it.
    pub reason: String,
}

/// Why an entry's `auth` field gives no username and password; the entry is skipped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthFieldError {
    /// It is not base64 (padded or not).
    #[error("not base64: {0}")]
    NotBase64(#[from] base64::DecodeError),
    /// Its decoded bytes are not text.
    #[error("not UTF-8 once decoded")]
    NotUtf8,
    /// Its decoded text has no `:` between username and password.
    #[error("must be base64 of username:password (no ':' found)")]
    NoColon,
}

/// One entry as written; `email` and unknown fields are ignored.
#[derive(Debug, Default, Deserialize)]
struct Entry {
    #[serde(default)]
    username: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    auth: String,
}

/// Adds the credentials of the secret `secret` (`namespace/name`) of type `secret_type` and
/// keys `data` to `keyring`, and answers what was skipped and why.
pub fn add_secret(
    keyring: &mut Keyring,
    secret: &str,
    secret_type: Option<&str>,
    data: &ObjectData,
) -> Vec<PullSecretError> {
    let error = |field: String, reason: String| PullSecretError {
        secret: secret.to_owned(),
        field,
        reason,
    };
    let (key, nested) = match secret_type {
        Some(DOCKER_CONFIG_JSON) => (".dockerconfigjson", true),
        Some(DOCKER_CFG) => (".dockercfg", false),
        other => {
            let reason = format!(
                "{:?} holds no registry credentials (want {DOCKER_CONFIG_JSON} or {DOCKER_CFG})",
                other.unwrap_or_default()
            );
            return vec![error("type".to_owned(), reason)];
        }
    };
    let field = format!("data[{key}]");
    let config = match data.get(key).filter(|bytes| !bytes.is_empty()) {
        None => return vec![error(field, "missing or empty".to_owned())],
        Some(bytes) => match serde_json::from_slice::<Value>(bytes) {
            Ok(config) => config,
            Err(e) => return vec![error(field, format!("not JSON: {e}"))],
        },
    };
    let (auths, field) = if nested {
        (config.get("auths"), format!("{field}.auths"))
    } else {
        (Some(&config), field)
    };
    let Some(auths) = auths.and_then(Value::as_object) else {
        return vec![error(field, "missing or not an object".to_owned())];
    };
    let mut errors = Vec::new();
    for (location, value) in auths {
        let field = format!("{field}[{location:?}]");
        if let Err((part, reason)) = add_entry(keyring, secret, location, value) {
            errors.push(error(format!("{field}{part}"), reason));
        }
    }
    errors
}

/// Adds the entry of `location`; the error is the part of the entry at fault (`.auth`, or
/// `""` for the whole) and why.
fn add_entry(
    keyring: &mut Keyring,
    secret: &str,
    location: &str,
    value: &Value,
) -> Result<(), (String, String)> {
    let entry: Entry = serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let part = if path == "." {
            String::new()
        } else {
            format!(".{path}")
        };
        (part, e.into_inner().to_string())
    })?;
    let (username, password) = if entry.auth.is_empty() {
        (entry.username, entry.password)
    } else {
        decode_auth(&entry.auth).map_err(|error| (".auth".to_owned(), error.to_string()))?
    };
    let credential = Credential {
        username,
        password,
        source: secret.to_owned(),
    };
    keyring
        .add(location, credential)
        .map_err(|error| (String::new(), error.to_string()))
}

/// `username` and `password` out of an `auth` field.
fn decode_auth(auth: &str) -> Result<(String, String), AuthFieldError> {
    let engine = if auth.trim_end().ends_with('=') {
        &STANDARD
    } else {
        &STANDARD_NO_PAD
    };
    let bytes = engine.decode(auth.trim_end())?;
    let text = String::from_utf8(bytes).map_err(|_| AuthFieldError::NotUtf8)?;
    let (username, password) = text.split_once(':').ok_or(AuthFieldError::NoColon)?;
    Ok((username.to_owned(), password.to_owned()))
}

/// The `auth` field for `username` and `password` (padded base64, as runtimes write it).
#[must_use]
pub fn encode_auth(username: &str, password: &str) -> String {
    STANDARD.encode(format!("{username}:{password}"))
}

#[cfg(test)]
mod tests {
    use super::super::reference::repository;
    use super::*;

    fn data(key: &str, value: &str) -> ObjectData {
        [(key.to_owned(), value.as_bytes().to_vec())].into()
    }

    /// The users the keyring built from one secret offers for `image`, and the errors.
    fn load(secret_type: &str, data: &ObjectData, image: &str) -> (Vec<String>, Vec<String>) {
        let mut keyring = Keyring::default();
        let errors = add_secret(&mut keyring, "ns/pull", Some(secret_type), data);
        let users = keyring
            .lookup(&repository(image))
            .iter()
            .map(|c| format!("{}:{}", c.username, c.password))
            .collect();
        (users, errors.iter().map(ToString::to_string).collect())
    }

    #[test]
    fn dockerconfigjson_entries_give_credentials() {
        let secret = data(
            ".dockerconfigjson",
            r#"{"auths": {"127.0.0.1:5001": {"username": "u", "password": "p", "email": "e@x"}}}"#,
        );
        let (users, errors) = load(DOCKER_CONFIG_JSON, &secret, "127.0.0.1:5001/a:1");
        assert_eq!((users, errors), (vec!["u:p".to_owned()], vec![]));
    }

    #[test]
    fn dockercfg_entries_sit_at_the_top_level() {
        let secret = data(".dockercfg", r#"{"https://quay.io": {"auth": "dTpw"}}"#);
        let (users, errors) = load(DOCKER_CFG, &secret, "quay.io/a/b");
        assert_eq!((users, errors), (vec!["u:p".to_owned()], vec![]));
        // The same content under the other type's key is not read.
        let (users, errors) = load(DOCKER_CONFIG_JSON, &secret, "quay.io/a/b");
        assert!(users.is_empty());
        assert_eq!(
            errors,
            ["image pull secret ns/pull: data[.dockerconfigjson]: missing or empty"]
        );
    }

    #[test]
    fn auth_is_decoded_padded_or_not_and_wins() {
        // "user:pa:ss" padded, and "ab:cd" without its padding.
        let secret = data(
            ".dockerconfigjson",
            r#"{"auths": {
                "a.example.com": {"auth": "dXNlcjpwYTpzcw==", "username": "ignored", "password": "x"},
                "b.example.com": {"auth": "YWI6Y2Q"}
            }}"#,
        );
        let (a, errors) = load(DOCKER_CONFIG_JSON, &secret, "a.example.com/app");
        assert_eq!((a, errors), (vec!["user:pa:ss".to_owned()], vec![]));
        let (b, _) = load(DOCKER_CONFIG_JSON, &secret, "b.example.com/app");
        assert_eq!(b, ["ab:cd"]);
        assert_eq!(encode_auth("user", "pa:ss"), "dXNlcjpwYTpzcw==");
    }

    #[test]
    fn malformed_parts_are_named_and_skipped_alone() {
        let secret = data(
            ".dockerconfigjson",
            r#"{"auths": {
                "bad-base64.example.com": {"auth": "%%%"},
                "no-colon.example.com": {"auth": "dXNlcg=="},
                "wrong-type.example.com": {"username": 7},
                "not-an-object.example.com": "text",
                "https:///v2/": {"username": "u", "password": "p"},
                "good.example.com": {"username": "u", "password": "p"}
            }}"#,
        );
        let (users, errors) = load(DOCKER_CONFIG_JSON, &secret, "good.example.com/app");
        assert_eq!(users, ["u:p"]);
        let prefix = "image pull secret ns/pull: data[.dockerconfigjson].auths";
        let expected = [
            format!("{prefix}[\"bad-base64.example.com\"].auth: not base64"),
            format!("{prefix}[\"https:///v2/\"]: names no registry host"),
            format!("{prefix}[\"no-colon.example.com\"].auth: must be base64 of username:password"),
            format!("{prefix}[\"not-an-object.example.com\"]: invalid type: string \"text\""),
            format!("{prefix}[\"wrong-type.example.com\"].username: invalid type: integer `7`"),
        ];
        assert_eq!(errors.len(), expected.len(), "{errors:#?}");
        for (error, expected) in errors.iter().zip(&expected) {
            assert!(error.starts_with(expected.as_str()), "{error} / {expected}");
        }
    }

    #[test]
    fn unusable_secrets_say_why() {
        let cases = [
            (
                DOCKER_CONFIG_JSON,
                data(".dockerconfigjson", "{not json"),
                "data[.dockerconfigjson]: not JSON: ",
            ),
            (
                DOCKER_CONFIG_JSON,
                data(".dockerconfigjson", r#"{"auth": {}}"#),
                "data[.dockerconfigjson].auths: missing or not an object",
            ),
            (
                DOCKER_CONFIG_JSON,
                data(".dockerconfigjson", ""),
                "data[.dockerconfigjson]: missing or empty",
            ),
            (
                DOCKER_CFG,
                data(".dockercfg", "[]"),
                "data[.dockercfg]: missing or not an object",
            ),
            (
                "Opaque",
                data(".dockerconfigjson", "{}"),
                "type: \"Opaque\" holds no registry credentials",
            ),
        ];
        for (secret_type, secret, expected) in cases {
            let (users, errors) = load(secret_type, &secret, "quay.io/a");
            assert!(users.is_empty());
            assert_eq!(errors.len(), 1, "{errors:?}");
            let expected = format!("image pull secret ns/pull: {expected}");
            assert!(
                errors[0].starts_with(&expected),
                "{} / {expected}",
                errors[0]
            );
        }
    }
}
