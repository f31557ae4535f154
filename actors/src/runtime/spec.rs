//! Which adapter to run, on which endpoint: the part of the configuration that decides the
//! runtime port's backend. A change to it is what triggers a hot swap.

use std::time::Duration;

use sergeant_config::sergeant::RuntimeAdapterKind;
use sergeant_config::{Endpoint, NodeConfig};

/// The adapter the configuration asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdapterSpec {
    /// cri or fake.
    pub kind: RuntimeAdapterKind,
    /// The runtime service endpoint (`unix:///…`).
    pub runtime_endpoint: Endpoint,
    /// The image service endpoint, when it differs from the runtime's.
    pub image_endpoint: Option<Endpoint>,
    /// The deadline of heavy runtime calls (`runtimeRequestTimeout`).
    pub request_timeout: Duration,
}

impl AdapterSpec {
    /// The spec of `config`.
    #[must_use]
    pub fn of(config: &NodeConfig) -> Self {
        Self {
            kind: config.sergeant.runtime_adapter,
            runtime_endpoint: config.kubelet.container_runtime_endpoint.clone(),
            image_endpoint: config.kubelet.image_service_endpoint.clone(),
            request_timeout: config.kubelet.runtime_request_timeout.as_std(),
        }
    }

    /// The adapter kind's name, as in the configuration.
    #[must_use]
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            RuntimeAdapterKind::Cri => "cri",
            RuntimeAdapterKind::Fake => "fake",
        }
    }

    /// How long the handshake of a new adapter may take before the swap is abandoned.
    #[must_use]
    pub fn handshake_timeout(&self) -> Duration {
        self.request_timeout.min(Duration::from_secs(10))
    }
}

impl std::fmt::Display for AdapterSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at {}", self.kind_name(), self.runtime_endpoint)
    }
}
