//! The services a pod links to ([`LinkedService`]): those of the pod's namespace when
//! `enableServiceLinks` is not false, and the API server's own (`kubernetes` in `default`)
//! always, read from what the sync step listed ([`linked_services`]). Their variables are
//! `spec`'s (`service_env`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{PodSpec, Service};

/// The namespace of the API server's own service.
const MASTER_NAMESPACE: &str = "default";
/// The API server's own service, whose variables every pod gets.
const MASTER_SERVICE: &str = "kubernetes";

/// One port of a linked service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedPort {
    /// Its name; empty for the single unnamed port.
    pub name: String,
    /// The service port.
    pub port: i32,
    /// `TCP`, `UDP` or `SCTP`.
    pub protocol: String,
}

/// A service whose variables a pod gets: its name, cluster IP and ports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedService {
    /// The service's name.
    pub name: String,
    /// Its cluster IP (never empty or `None`: headless services give no variables).
    pub cluster_ip: String,
    /// Its ports, in spec order.
    pub ports: Vec<LinkedPort>,
}

impl LinkedService {
    /// `service` as a link; `None` for a headless service or one without an IP or ports.
    fn of(service: &Service) -> Option<Self> {
        let spec = service.spec.as_ref()?;
        let ip = spec.cluster_ip.as_deref().unwrap_or_default();
        if ip.is_empty() || ip == "None" {
            return None;
        }
        let ports: Vec<LinkedPort> = spec
            .ports
            .iter()
            .flatten()
            .map(|p| LinkedPort {
                name: p.name.clone().unwrap_or_default(),
                port: p.port,
                protocol: p.protocol.clone().unwrap_or_else(|| "TCP".to_owned()),
            })
            .collect();
        (!ports.is_empty()).then(|| LinkedService {
            name: service.metadata.name.clone().unwrap_or_default(),
            cluster_ip: ip.to_owned(),
            ports,
        })
    }
}

/// The services a pod of `spec` links to, by name: those of its own namespace
/// (`namespace_services`) unless `enableServiceLinks: false`, and `master` (the API server's
/// `default/kubernetes`, when it exists) unless the namespace has a service of that name.
#[must_use]
pub fn linked_services(
    spec: &PodSpec,
    namespace_services: &[Service],
    master: Option<&Service>,
) -> Vec<LinkedService> {
    let mut by_name = BTreeMap::new();
    if spec.enable_service_links != Some(false) {
        for link in namespace_services.iter().filter_map(LinkedService::of) {
            by_name.insert(link.name.clone(), link);
        }
    }
    let master = master
        .filter(|s| {
            s.metadata.namespace.as_deref() == Some(MASTER_NAMESPACE)
                && s.metadata.name.as_deref() == Some(MASTER_SERVICE)
        })
        .and_then(LinkedService::of);
    if let Some(link) = master {
        by_name.entry(link.name.clone()).or_insert(link);
    }
    by_name.into_values().collect()
}
