//! CRI endpoints (`containerRuntimeEndpoint`, `imageServiceEndpoint`,
//! `--container-runtime-endpoint`), parsed when the configuration is loaded.
//!
//! The kubelet accepts `unix:///path/to/socket` on Linux, `npipe://./pipe/name` on Windows, and
//! tolerates a bare absolute socket path. Everything else is refused at load, with the file, line,
//! field, endpoint and reason, before any connection is attempted. Whether the kind of endpoint
//! exists on the platform is the runtime adapter's check, made when it connects.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::text::{deserialize_parsed, Scalars};

/// The scheme of a unix domain socket endpoint.
const UNIX_SCHEME: &str = "unix://";
/// The scheme of a Windows named pipe endpoint.
const NPIPE_SCHEME: &str = "npipe://";
/// Every named pipe lives under this namespace (`\\.\pipe\`).
const PIPE_PREFIX: &str = "//./pipe/";

/// Where a CRI runtime (or image service) listens.
///
/// Exists so that nothing after the configuration handles raw endpoint strings: once loaded, an
/// endpoint is known to be of a supported kind, and only the platform check remains at connect.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// A unix domain socket at an absolute path (`unix:///run/containerd/containerd.sock`).
    Unix(PathBuf),
    /// A Windows named pipe, kept as its full pipe path (`\\.\pipe\containerd-containerd`).
    NamedPipe(String),
}

/// Why an endpoint string was refused.
///
/// Exists so a misconfigured `--container-runtime-endpoint` is reported with the exact value and
/// what is wrong with it, instead of as a connection failure later.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// The endpoint string is empty (or only whitespace).
    #[error("CRI endpoint is empty: expected unix:///path/to/socket or npipe://./pipe/name")]
    Empty,
    /// The scheme is not one the kubelet speaks (tcp://, http://, …).
    #[error(
        "CRI endpoint {endpoint:?}: unsupported scheme {scheme:?}; only unix:// (and npipe:// on Windows) are supported"
    )]
    UnsupportedScheme {
        /// The endpoint as given.
        endpoint: String,
        /// The scheme found in it, without `://`.
        scheme: String,
    },
    /// A unix endpoint whose path is missing or relative.
    #[error("CRI endpoint {endpoint:?}: the socket path must be absolute (e.g. unix:///run/containerd/containerd.sock)")]
    RelativePath {
        /// The endpoint as given.
        endpoint: String,
    },
    /// A named pipe endpoint that is not of the form `npipe://./pipe/NAME`.
    #[error("CRI endpoint {endpoint:?}: a named pipe endpoint must look like npipe://./pipe/NAME")]
    InvalidPipe {
        /// The endpoint as given.
        endpoint: String,
    },
}

impl Endpoint {
    /// Parses an endpoint string as the kubelet's endpoint flags accept it.
    ///
    /// # Errors
    ///
    /// [`EndpointError`] naming the endpoint when it is empty, has an unsupported scheme, has a
    /// relative socket path, or is a malformed named pipe. Parsing does not check the platform:
    /// an npipe endpoint parses everywhere and is refused only when a connection is built.
    pub fn parse(raw: &str) -> Result<Self, EndpointError> {
        let endpoint = raw.trim();
        if endpoint.is_empty() {
            return Err(EndpointError::Empty);
        }
        if let Some(path) = endpoint.strip_prefix(UNIX_SCHEME) {
            return Self::unix(raw, path);
        }
        if let Some(rest) = endpoint.strip_prefix(NPIPE_SCHEME) {
            return Self::npipe(raw, rest);
        }
        if let Some((scheme, _)) = endpoint.split_once("://") {
            return Err(EndpointError::UnsupportedScheme {
                endpoint: raw.to_string(),
                scheme: scheme.to_string(),
            });
        }
        // No scheme: upstream tolerates a bare socket path (with a deprecation warning).
        Self::unix(raw, endpoint)
    }

    fn unix(raw: &str, path: &str) -> Result<Self, EndpointError> {
        let path = Path::new(path);
        if !path.is_absolute() {
            return Err(EndpointError::RelativePath {
                endpoint: raw.to_string(),
            });
        }
        Ok(Self::Unix(path.to_path_buf()))
    }

    fn npipe(raw: &str, rest: &str) -> Result<Self, EndpointError> {
        // `npipe://./pipe/name` leaves `./pipe/name`; accept `//./pipe/name` too (npipe:////./…).
        let normalized = rest.replace('\\', "/");
        let with_host = if normalized.starts_with("//") {
            normalized
        } else {
            format!("//{normalized}")
        };
        let name = with_host
            .strip_prefix(PIPE_PREFIX)
            .filter(|name| !name.is_empty() && !name.contains('/'))
            .ok_or_else(|| EndpointError::InvalidPipe {
                endpoint: raw.to_string(),
            })?;
        Ok(Self::NamedPipe(format!(r"\\.\pipe\{name}")))
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unix(path) => write!(f, "{UNIX_SCHEME}{}", path.display()),
            Self::NamedPipe(pipe) => {
                let name = pipe.rsplit('\\').next().unwrap_or(pipe);
                write!(f, "{NPIPE_SCHEME}./pipe/{name}")
            }
        }
    }
}

impl Serialize for Endpoint {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Endpoint {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_parsed(
            deserializer,
            "a CRI endpoint such as \"unix:///run/containerd/containerd.sock\"",
            Scalars::StringsOnly,
        )
    }
}

impl std::str::FromStr for Endpoint {
    type Err = EndpointError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_endpoints() {
        assert_eq!(
            Endpoint::parse("unix:///run/containerd/containerd.sock"),
            Ok(Endpoint::Unix("/run/containerd/containerd.sock".into()))
        );
        assert_eq!(
            Endpoint::parse("/run/crio/crio.sock"),
            Ok(Endpoint::Unix("/run/crio/crio.sock".into()))
        );
        assert_eq!(
            Endpoint::parse("unix:///a.sock").map(|e| e.to_string()),
            Ok("unix:///a.sock".to_string())
        );
    }

    #[test]
    fn npipe_endpoints() {
        let e = Endpoint::parse("npipe://./pipe/containerd-containerd");
        assert_eq!(
            e,
            Ok(Endpoint::NamedPipe(
                r"\\.\pipe\containerd-containerd".to_string()
            ))
        );
        assert_eq!(
            e.map(|e| e.to_string()),
            Ok("npipe://./pipe/containerd-containerd".to_string())
        );
        assert!(matches!(
            Endpoint::parse("npipe://./notpipe/x"),
            Err(EndpointError::InvalidPipe { .. })
        ));
        assert!(matches!(
            Endpoint::parse("npipe://./pipe/"),
            Err(EndpointError::InvalidPipe { .. })
        ));
    }

    #[test]
    fn refused_endpoints() {
        assert_eq!(Endpoint::parse("  "), Err(EndpointError::Empty));
        let err = Endpoint::parse("tcp://127.0.0.1:1234");
        assert_eq!(
            err,
            Err(EndpointError::UnsupportedScheme {
                endpoint: "tcp://127.0.0.1:1234".into(),
                scheme: "tcp".into()
            })
        );
        let msg = err.map(|_| ()).unwrap_err().to_string();
        assert!(msg.contains("tcp://127.0.0.1:1234") && msg.contains("unsupported scheme"));
        assert!(matches!(
            Endpoint::parse("http://localhost"),
            Err(EndpointError::UnsupportedScheme { .. })
        ));
        assert!(matches!(
            Endpoint::parse("unix://relative.sock"),
            Err(EndpointError::RelativePath { .. })
        ));
        assert!(matches!(
            Endpoint::parse("containerd.sock"),
            Err(EndpointError::RelativePath { .. })
        ));
    }
}
