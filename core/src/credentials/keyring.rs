//! The keyring: registry credentials by location, and which of them apply to an image.
//!
//! As upstream's credential keyring: a location is a host, optionally with a port and a path
//! (`quay.io/coreos`); `http(s)://` and a `/v1/` or `/v2/` API prefix are ignored; each host
//! label may be a glob (`*.example.com`); the port must be equal and the path a prefix of the
//! image's repository. Every match applies, the most specific first (longest path, then
//! fewest globbed labels), so a pull tries them in that order. Docker Hub's names
//! (`docker.io`, `index.docker.io`, `registry-1.docker.io`) are one registry.

use super::reference::{canonical_host, Repository};

/// One username and password for a registry, and the secret it came from.
#[derive(Clone, PartialEq, Eq)]
pub struct Credential {
    /// The registry user.
    pub username: String,
    /// Its password (or token).
    pub password: String,
    /// The pull secret that holds it, for logs (never the values).
    pub source: String,
}

impl std::fmt::Debug for Credential {
    /// Names the user and the source only: a password never reaches a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credential")
            .field("username", &self.username)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// Why a pull secret's key is not a registry location: its credential is skipped, and the
/// secret's other entries still count.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("names no registry host")]
pub struct LocationError {
    /// The location as the secret writes it.
    pub location: String,
}

/// Where a credential applies.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Location {
    /// The host's dot-separated labels, each a glob.
    labels: Vec<String>,
    /// The port, if the location names one.
    port: Option<String>,
    /// The path prefix (`""` or starting with `/`).
    path: String,
}

impl Location {
    /// Reads a location as pull secrets write it (`https://quay.io/v2/coreos`).
    fn parse(text: &str) -> Result<Self, LocationError> {
        let bare = ["https://", "http://"]
            .iter()
            .find_map(|scheme| text.strip_prefix(scheme))
            .unwrap_or(text);
        let (host, path) = bare
            .find('/')
            .map_or((bare, ""), |slash| bare.split_at(slash));
        let path = if path.starts_with("/v1/") || path.starts_with("/v2/") {
            &path[3..]
        } else {
            path
        };
        let path = if path == "/" { "" } else { path };
        let host = canonical_host(host);
        let (name, port) = split_port(&host);
        if name.is_empty() {
            return Err(LocationError {
                location: text.to_owned(),
            });
        }
        Ok(Location {
            labels: name.split('.').map(str::to_owned).collect(),
            port: port.map(str::to_owned),
            path: path.to_owned(),
        })
    }

    /// Whether credentials for this location apply to `repo`.
    fn matches(&self, repo: &Repository) -> bool {
        let (name, port) = split_port(&repo.host);
        let labels: Vec<&str> = name.split('.').collect();
        self.port.as_deref() == port
            && self.labels.len() == labels.len()
            && repo.path.starts_with(&self.path)
            && self
                .labels
                .iter()
                .zip(labels)
                .all(|(pattern, label)| glob(pattern.as_bytes(), label.as_bytes()))
    }

    /// How specific the location is: longer paths first, then fewer globbed labels.
    fn specificity(&self) -> (usize, usize) {
        let literal = self
            .labels
            .iter()
            .filter(|l| !l.contains(['*', '?']))
            .count();
        (self.path.len(), literal)
    }
}

/// `host` split into name and port (`None` without one); an IPv6 literal keeps its brackets.
fn split_port(host: &str) -> (&str, Option<&str>) {
    if host.starts_with('[') {
        return match host.split_once("]:") {
            Some((address, port)) => (&host[..=address.len()], Some(port)),
            None => (host, None),
        };
    }
    match host.rsplit_once(':') {
        Some((name, port)) => (name, Some(port)),
        None => (host, None),
    }
}

/// Whether `text` matches the glob `pattern` (`*` any run of characters, `?` one).
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|skip| glob(rest, &text[skip..])),
        Some((b'?', rest)) => !text.is_empty() && glob(rest, &text[1..]),
        Some((c, rest)) => text.first() == Some(c) && glob(rest, &text[1..]),
    }
}

/// Registry credentials by location, in the order they were added.
#[derive(Debug, Clone, Default)]
pub struct Keyring {
    entries: Vec<(Location, Credential)>,
}

impl Keyring {
    /// Adds `credential` for the registry location `location` (a pull secret's key).
    ///
    /// # Errors
    /// [`LocationError`] when `location` is not a registry location; the keyring is unchanged.
    pub fn add(&mut self, location: &str, credential: Credential) -> Result<(), LocationError> {
        let location = Location::parse(location)?;
        self.entries.push((location, credential));
        Ok(())
    }

    /// The credentials that apply to `repo`, the most specific location first (equal ones
    /// in the order added), each distinct username and password once.
    #[must_use]
    pub fn lookup(&self, repo: &Repository) -> Vec<&Credential> {
        let mut found: Vec<&(Location, Credential)> = self
            .entries
            .iter()
            .filter(|(location, _)| location.matches(repo))
            .collect();
        found.sort_by_key(|(location, _)| std::cmp::Reverse(location.specificity()));
        let mut credentials: Vec<&Credential> = Vec::with_capacity(found.len());
        for (_, credential) in found {
            let seen = credentials
                .iter()
                .any(|c| c.username == credential.username && c.password == credential.password);
            if !seen {
                credentials.push(credential);
            }
        }
        credentials
    }
}

#[cfg(test)]
mod tests {
    use super::super::reference::repository;
    use super::*;

    fn credential(name: &str) -> Credential {
        Credential {
            username: name.to_owned(),
            password: format!("{name}-password"),
            source: "s".to_owned(),
        }
    }

    fn keyring(locations: &[&str]) -> Keyring {
        let mut keyring = Keyring::default();
        for location in locations {
            keyring.add(location, credential(location)).unwrap();
        }
        keyring
    }

    fn users(keyring: &Keyring, image: &str) -> Vec<String> {
        keyring
            .lookup(&repository(image))
            .into_iter()
            .map(|c| c.username.clone())
            .collect()
    }

    #[test]
    fn hosts_and_ports_must_match() {
        let ring = keyring(&["127.0.0.1:5001", "registry.example.com"]);
        assert_eq!(users(&ring, "127.0.0.1:5001/a/b:1"), ["127.0.0.1:5001"]);
        assert!(users(&ring, "127.0.0.1:5000/a/b:1").is_empty());
        assert!(users(&ring, "127.0.0.1/a/b").is_empty());
        assert_eq!(
            users(&ring, "registry.example.com/app"),
            ["registry.example.com"]
        );
        assert!(users(&ring, "registry.example.com:8443/app").is_empty());
        assert!(users(&ring, "other.example.com/app").is_empty());
        assert!(users(&ring, "busybox").is_empty());
    }

    #[test]
    fn ipv6_literals_keep_their_brackets_and_port() {
        assert_eq!(split_port("[::1]:5000"), ("[::1]", Some("5000")));
        assert_eq!(split_port("[::1]"), ("[::1]", None));
        let ring = keyring(&["[::1]:5000"]);
        assert_eq!(users(&ring, "[::1]:5000/app"), ["[::1]:5000"]);
        assert!(users(&ring, "[::1]:5001/app").is_empty());
    }

    #[test]
    fn schemes_and_api_versions_are_ignored() {
        for location in [
            "https://reg.example.com",
            "http://reg.example.com/",
            "reg.example.com/v1/",
            "https://reg.example.com/v2/",
        ] {
            let ring = keyring(&[location]);
            assert_eq!(users(&ring, "reg.example.com/team/app"), [location]);
        }
        let ring = keyring(&["https://reg.example.com/v2/team"]);
        assert_eq!(
            users(&ring, "reg.example.com/team/app"),
            ["https://reg.example.com/v2/team"]
        );
        assert!(users(&ring, "reg.example.com/other/app").is_empty());
    }

    #[test]
    fn paths_are_prefixes_and_the_longest_comes_first() {
        let ring = keyring(&[
            "quay.io",
            "quay.io/coreos/etcd",
            "quay.io/coreos",
            "quay.io/other",
        ]);
        assert_eq!(
            users(&ring, "quay.io/coreos/etcd:v3"),
            ["quay.io/coreos/etcd", "quay.io/coreos", "quay.io"]
        );
        assert_eq!(
            users(&ring, "quay.io/coreos/flannel"),
            ["quay.io/coreos", "quay.io"]
        );
        assert_eq!(users(&ring, "quay.io/team/app"), ["quay.io"]);
    }

    #[test]
    fn docker_hub_names_are_one_registry() {
        for location in [
            "docker.io",
            "index.docker.io",
            "https://index.docker.io/v1/",
            "registry-1.docker.io",
        ] {
            let ring = keyring(&[location]);
            for image in [
                "busybox",
                "team/app:1",
                "docker.io/library/busybox",
                "index.docker.io/team/app",
            ] {
                assert_eq!(users(&ring, image), [location], "{location} for {image}");
            }
            assert!(users(&ring, "quay.io/team/app").is_empty());
        }
        let ring = keyring(&["docker.io/team"]);
        assert_eq!(users(&ring, "team/app"), ["docker.io/team"]);
        assert!(users(&ring, "busybox").is_empty());
    }

    #[test]
    fn globbed_labels_match_and_come_after_literal_ones() {
        let ring = keyring(&["*.example.com", "reg.example.com", "reg?.example.com"]);
        assert_eq!(
            users(&ring, "reg.example.com/app"),
            ["reg.example.com", "*.example.com"]
        );
        assert_eq!(
            users(&ring, "reg2.example.com/app"),
            ["*.example.com", "reg?.example.com"]
        );
        assert!(users(&ring, "a.b.example.com/app").is_empty());
    }

    #[test]
    fn equal_locations_keep_their_order_and_repeats_go() {
        let mut ring = Keyring::default();
        ring.add("quay.io", credential("first")).unwrap();
        ring.add("https://quay.io", credential("second")).unwrap();
        ring.add("quay.io/", credential("first")).unwrap();
        assert_eq!(users(&ring, "quay.io/a/b"), ["first", "second"]);
    }

    #[test]
    fn a_location_without_a_host_is_refused() {
        let mut ring = Keyring::default();
        assert_eq!(
            ring.add("https:///v2/", credential("x")),
            Err(LocationError {
                location: "https:///v2/".to_owned()
            })
        );
        assert_eq!(
            ring.add("https:///v2/", credential("x"))
                .unwrap_err()
                .to_string(),
            "names no registry host"
        );
        assert!(ring.entries.is_empty());
    }

    #[test]
    fn debug_output_hides_the_password() {
        let text = format!("{:?}", credential("user"));
        assert!(
            text.contains("user") && !text.contains("password\""),
            "{text}"
        );
        assert!(!text.contains("user-password"), "{text}");
    }
}
