//! Where an `HTTPGetAction` points: scheme, host, port, path and headers, resolved against the
//! container's ports and the pod's IP.

use k8s_openapi::api::core::v1::{Container, HTTPGetAction};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// Why an action cannot be turned into a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// The port names no port of the container, or is out of range.
    #[error("port {0}")]
    Port(PortError),
    /// No host is given and the pod has no IP yet.
    #[error("no host: the action names none and the pod has no IP yet")]
    NoHost,
    /// The scheme is neither HTTP nor HTTPS.
    #[error("scheme {0:?} is not HTTP or HTTPS")]
    Scheme(String),
}

/// Why the port of an `httpGet` or `tcpSocket` action is not usable; the text follows `port `
/// in the probe's or hook's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PortError {
    /// A number outside 1–65535.
    #[error("{0} is out of range")]
    OutOfRange(i32),
    /// A name that none of the container's ports has.
    #[error("{name:?} is not a port of container {container:?}")]
    NotAPort {
        /// The port name the action gives.
        name: String,
        /// The container.
        container: String,
    },
}

/// One resolved HTTP GET: what [`super::get`] connects to and sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpTarget {
    /// Whether the connection uses TLS (certificates are not verified, as upstream).
    pub https: bool,
    /// The host to connect to: the action's host or the pod IP.
    pub host: String,
    /// The TCP port.
    pub port: u16,
    /// The path and query, starting with `/`.
    pub path: String,
    /// Headers to send, in order; a `Host` header here replaces the default one.
    pub headers: Vec<(String, String)>,
}

impl HttpTarget {
    /// Resolves `action` of `container`: the host defaults to `pod_ip`, a named port is looked
    /// up among the container's ports, `User-Agent` defaults to `user_agent` and `Accept` to
    /// `*/*` unless the action sets them.
    ///
    /// # Errors
    /// [`TargetError`] naming what cannot be resolved.
    pub fn resolve(
        action: &HTTPGetAction,
        container: &Container,
        pod_ip: Option<&str>,
        user_agent: &str,
    ) -> Result<Self, TargetError> {
        let https = match action.scheme.as_deref().unwrap_or("HTTP") {
            "HTTP" | "http" => false,
            "HTTPS" | "https" => true,
            other => return Err(TargetError::Scheme(other.to_owned())),
        };
        let host = action
            .host
            .clone()
            .filter(|h| !h.is_empty())
            .or_else(|| pod_ip.map(str::to_owned))
            .ok_or(TargetError::NoHost)?;
        let port = resolve_port(&action.port, container).map_err(TargetError::Port)?;
        let path = match action.path.as_deref().unwrap_or_default() {
            "" => "/".to_owned(),
            p if p.starts_with('/') => p.to_owned(),
            p => format!("/{p}"),
        };
        let mut headers: Vec<(String, String)> = action
            .http_headers
            .iter()
            .flatten()
            .map(|h| (h.name.clone(), h.value.clone()))
            .collect();
        for (name, value) in [("User-Agent", user_agent), ("Accept", "*/*")] {
            if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
                headers.push((name.to_owned(), value.to_owned()));
            }
        }
        Ok(Self {
            https,
            host,
            port,
            path,
            headers,
        })
    }

    /// The value of the `Host` header: the action's own, or `host:port`.
    #[must_use]
    pub fn host_header(&self) -> String {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("host"))
            .map_or_else(|| self.authority(), |(_, v)| v.clone())
    }

    /// `host:port`, with IPv6 hosts in brackets.
    #[must_use]
    pub fn authority(&self) -> String {
        authority(&self.host, self.port)
    }
}

/// `host:port` as a URL or dialer wants it: an IPv6 host goes in brackets.
#[must_use]
pub fn authority(host: &str, port: u16) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// A port given by number, or by the name of one of `container`'s ports.
///
/// # Errors
/// [`PortError`]: why the port is not usable.
pub fn resolve_port(port: &IntOrString, container: &Container) -> Result<u16, PortError> {
    match port {
        IntOrString::Int(number) => u16::try_from(*number)
            .ok()
            .filter(|n| *n > 0)
            .ok_or(PortError::OutOfRange(*number)),
        IntOrString::String(name) => container
            .ports
            .iter()
            .flatten()
            .find(|p| p.name.as_deref() == Some(name.as_str()))
            .and_then(|p| u16::try_from(p.container_port).ok())
            .ok_or_else(|| PortError::NotAPort {
                name: name.clone(),
                container: container.name.clone(),
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ContainerPort, HTTPHeader};

    fn container() -> Container {
        Container {
            name: "app".into(),
            ports: Some(vec![ContainerPort {
                name: Some("web".into()),
                container_port: 8080,
                ..ContainerPort::default()
            }]),
            ..Container::default()
        }
    }

    #[test]
    fn the_host_defaults_to_the_pod_ip_and_a_named_port_is_looked_up() {
        let action = HTTPGetAction {
            port: IntOrString::String("web".into()),
            path: Some("healthz".into()),
            ..HTTPGetAction::default()
        };
        let target =
            HttpTarget::resolve(&action, &container(), Some("10.1.2.3"), "kube-probe/1.37")
                .unwrap();
        assert!(!target.https);
        assert_eq!(target.authority(), "10.1.2.3:8080");
        assert_eq!(target.path, "/healthz");
        assert_eq!(target.host_header(), "10.1.2.3:8080");
        assert!(target
            .headers
            .contains(&("User-Agent".into(), "kube-probe/1.37".into())));
        assert!(target.headers.contains(&("Accept".into(), "*/*".into())));
    }

    #[test]
    fn headers_of_the_action_win_over_the_defaults() {
        let action = HTTPGetAction {
            port: IntOrString::Int(80),
            host: Some("fd00::1".into()),
            scheme: Some("HTTPS".into()),
            http_headers: Some(vec![
                HTTPHeader {
                    name: "host".into(),
                    value: "example.test".into(),
                },
                HTTPHeader {
                    name: "user-agent".into(),
                    value: "mine".into(),
                },
            ]),
            ..HTTPGetAction::default()
        };
        let target = HttpTarget::resolve(&action, &container(), None, "kube-probe/1.37").unwrap();
        assert!(target.https);
        assert_eq!(target.authority(), "[fd00::1]:80");
        assert_eq!(target.host_header(), "example.test");
        assert_eq!(target.path, "/");
        assert!(!target.headers.iter().any(|(_, v)| v == "kube-probe/1.37"));
    }

    #[test]
    fn unresolvable_actions_say_why() {
        let named = HTTPGetAction {
            port: IntOrString::String("nope".into()),
            ..HTTPGetAction::default()
        };
        let err = HttpTarget::resolve(&named, &container(), Some("10.0.0.1"), "ua").unwrap_err();
        assert_eq!(
            err.to_string(),
            "port \"nope\" is not a port of container \"app\""
        );
        let no_ip = HTTPGetAction {
            port: IntOrString::Int(80),
            ..HTTPGetAction::default()
        };
        assert_eq!(
            HttpTarget::resolve(&no_ip, &container(), None, "ua").unwrap_err(),
            TargetError::NoHost
        );
        let zero = HTTPGetAction {
            port: IntOrString::Int(0),
            ..HTTPGetAction::default()
        };
        assert_eq!(
            HttpTarget::resolve(&zero, &container(), Some("10.0.0.1"), "ua"),
            Err(TargetError::Port(PortError::OutOfRange(0)))
        );
    }
}
