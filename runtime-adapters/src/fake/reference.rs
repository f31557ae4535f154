//! Image references in the normalized form containerd stores them under
//! (`nginx` → `docker.io/library/nginx:latest`), and the ids and digests the fake derives from
//! them.

use super::ids::digest;

/// The registry a reference without one names.
const DEFAULT_DOMAIN: &str = "docker.io";
/// The tag a reference without tag or digest names.
const DEFAULT_TAG: &str = "latest";

/// The normalized form of `reference`, or `None` when it is not an image reference at all
/// (empty, or containing white space).
pub(super) fn normalize(reference: &str) -> Option<String> {
    if reference.is_empty() || reference.contains(char::is_whitespace) {
        return None;
    }
    let (name, digest) = match reference.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (reference, None),
    };
    let last_slash = name.rfind('/').map_or(0, |at| at + 1);
    let has_tag = name[last_slash..].contains(':');
    let mut normalized = match name.split_once('/') {
        Some((domain, _)) if domain.contains(['.', ':']) || domain == "localhost" => {
            name.to_string()
        }
        Some(_) => format!("{DEFAULT_DOMAIN}/{name}"),
        None => format!("{DEFAULT_DOMAIN}/library/{name}"),
    };
    match digest {
        Some(digest) => {
            normalized.push('@');
            normalized.push_str(digest);
        }
        None if !has_tag => {
            normalized.push(':');
            normalized.push_str(DEFAULT_TAG);
        }
        None => {}
    }
    Some(normalized)
}

/// The image id (`sha256:` and 64 hex digits) of the image stored under `normalized`.
pub(super) fn image_id(normalized: &str) -> String {
    format!("sha256:{}", digest(normalized))
}

/// The repository of a normalized reference: the reference without its tag or digest.
fn repository(normalized: &str) -> &str {
    if let Some((name, _)) = normalized.split_once('@') {
        return name;
    }
    let last_slash = normalized.rfind('/').map_or(0, |at| at + 1);
    match normalized[last_slash..].rfind(':') {
        Some(colon) => &normalized[..last_slash + colon],
        None => normalized,
    }
}

/// The repo digest (`repository@sha256:…`) of the image stored under `normalized`.
pub(super) fn repo_digest(normalized: &str) -> String {
    if normalized.contains('@') {
        normalized.to_string()
    } else {
        format!("{}@{}", repository(normalized), image_id(normalized))
    }
}

/// The repo tags of the image stored under `normalized` (none when it was pulled by digest).
pub(super) fn repo_tags(normalized: &str) -> Vec<String> {
    if normalized.contains('@') {
        Vec::new()
    } else {
        vec![normalized.to_string()]
    }
}
