//! Where an image comes from — its registry host and repository path — read from the image
//! reference the way container runtimes read it, so pull secrets are matched against the
//! registry the runtime will really contact.

/// Docker Hub, the registry of references that name none.
const DOCKER_HUB: &str = "docker.io";
/// The other names of Docker Hub, which credentials and references may use alike.
const DOCKER_HUB_ALIASES: [&str; 2] = ["index.docker.io", "registry-1.docker.io"];

/// The registry and repository of one image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repository {
    /// The registry host with its port, if any (`127.0.0.1:5001`, `docker.io`).
    pub host: String,
    /// The repository path under it, with a leading `/` (`/library/busybox`).
    pub path: String,
}

/// The repository of `image`: tag and digest dropped; a reference without a registry is
/// on Docker Hub (`busybox` → `docker.io/library/busybox`).
#[must_use]
pub fn repository(image: &str) -> Repository {
    let name = image.split_once('@').map_or(image, |(name, _digest)| name);
    let name = match name.rsplit_once(':') {
        Some((before, tag)) if !tag.contains('/') => before,
        _ => name,
    };
    let (host, path) = match name.split_once('/') {
        Some((first, rest)) if is_registry(first) => (canonical_host(first), rest.to_owned()),
        Some(_) => (DOCKER_HUB.to_owned(), name.to_owned()),
        None => (DOCKER_HUB.to_owned(), format!("library/{name}")),
    };
    Repository {
        host,
        path: format!("/{path}"),
    }
}

/// Whether the first component of a reference names a registry rather than a Docker Hub
/// user: it has a domain dot or a port, or is `localhost`.
fn is_registry(component: &str) -> bool {
    component.contains(['.', ':']) || component == "localhost"
}

/// `host` with Docker Hub's aliases folded into `docker.io`.
#[must_use]
pub fn canonical_host(host: &str) -> String {
    if DOCKER_HUB_ALIASES.contains(&host) {
        DOCKER_HUB.to_owned()
    } else {
        host.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(image: &str) -> (String, String) {
        let repo = repository(image);
        (repo.host, repo.path)
    }

    #[test]
    fn references_name_their_registry_and_repository() {
        let cases = [
            ("busybox", "docker.io", "/library/busybox"),
            ("busybox:1.36", "docker.io", "/library/busybox"),
            ("team/app:v1", "docker.io", "/team/app"),
            ("docker.io/team/app", "docker.io", "/team/app"),
            ("index.docker.io/team/app", "docker.io", "/team/app"),
            (
                "registry-1.docker.io/library/busybox",
                "docker.io",
                "/library/busybox",
            ),
            (
                "127.0.0.1:5001/sergeant/private/shell:1.0",
                "127.0.0.1:5001",
                "/sergeant/private/shell",
            ),
            ("localhost/app", "localhost", "/app"),
            ("quay.io/coreos/etcd@sha256:abc", "quay.io", "/coreos/etcd"),
            (
                "reg.example.com:443/a/b:t@sha256:abc",
                "reg.example.com:443",
                "/a/b",
            ),
            ("reg.example.com:443/a/b", "reg.example.com:443", "/a/b"),
        ];
        for (image, host, path) in cases {
            assert_eq!(parts(image), (host.to_owned(), path.to_owned()), "{image}");
        }
    }
}
