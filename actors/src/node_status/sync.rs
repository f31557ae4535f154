//! One round of node status: look at the runtime (version, images), read the Node, register it
//! when it is missing, and patch its status when it changed or a report is due.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::{Api, Client};
use sergeant_config::NodeConfig;
use sergeant_core::cni::NetworkReadiness;
use sergeant_core::eviction::signals::Pressure;
use sergeant_core::node_status::build::{self, RuntimeView};
use sergeant_core::node_status::conditions::not_ready_reason;
use sergeant_core::node_status::facts::{MachineFacts, RuntimeHealth};
use sergeant_core::node_status::images::node_images;
use sergeant_kube_api::node_ttl;
use sergeant_messages::runtime::cri;

use super::error::ApiCallError;
use super::register;
use crate::runtime::RuntimePort;

/// What a round works from.
pub struct Round {
    /// The API server.
    pub client: Client,
    /// The runtime, for its version and images.
    pub port: RuntimePort,
    /// The machine facts read at start.
    pub facts: Arc<MachineFacts>,
    /// The configuration in force.
    pub config: Arc<NodeConfig>,
    /// The runtime's health as last polled.
    pub health: RuntimeHealth,
    /// The CNI adapter's last verdict (`None`: it made no check).
    pub cni: Option<NetworkReadiness>,
    /// The pressure conditions the eviction manager reports.
    pub pressure: BTreeSet<Pressure>,
    /// The runtime version found before, kept while the runtime does not answer.
    pub runtime_version: String,
    /// Whether the report period has passed: patch even if nothing changed.
    pub report_due: bool,
}

/// What a round did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The Node's uid, for the lease's owner reference.
    pub node_uid: Option<String>,
    /// What was written.
    pub action: Action,
    /// The runtime version now known.
    pub runtime_version: String,
    /// Why the node is not ready, or `None` when it is ready.
    pub not_ready: Option<String>,
    /// How long config maps and secrets may be cached, as the Node's TTL annotation says
    /// (read by the `Cache` strategy).
    pub object_ttl: Option<Duration>,
    /// The Node's `spec.podCIDRs` (or its single `spec.podCIDR`); empty when unassigned.
    pub pod_cidrs: Vec<String>,
}

/// What a round wrote to the API server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// The Node did not exist and was created.
    Registered,
    /// The status changed (or a report was due) and was patched.
    Patched,
    /// Nothing changed and no report was due.
    Unchanged,
}

impl Action {
    /// The `result` label of `sergeant_node_status_updates_total`.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::Registered => "registered",
            Self::Patched => "patched",
            Self::Unchanged => "unchanged",
        }
    }
}

/// Runs one round.
///
/// # Errors
/// [`ApiCallError`] when the API server cannot be reached or refuses a call.
pub async fn run(round: Round) -> Result<Outcome, ApiCallError> {
    let runtime = look_at_runtime(&round).await;
    let nodes: Api<Node> = Api::all(round.client.clone());
    let name = &round.facts.node_name;
    let kubelet = &round.config.kubelet;
    let now = Time(Timestamp::from_second(Timestamp::now().as_second()).unwrap_or_default());
    let (node, action) = match register::get(round.client.clone(), name).await? {
        None => {
            let node = build::node(&round.facts, kubelet, &runtime, &now);
            (register::register(&nodes, &node).await?, Action::Registered)
        }
        Some(node) => {
            let status = build::status(&round.facts, kubelet, &runtime, node.status.as_ref(), &now);
            let old = node.status.clone().unwrap_or_default();
            if round.report_due || build::changed(&old, &status) {
                (
                    register::patch_status(&nodes, name, &status).await?,
                    Action::Patched,
                )
            } else {
                (node, Action::Unchanged)
            }
        }
    };
    Ok(Outcome {
        pod_cidrs: pod_cidrs(&node),
        node_uid: node.metadata.uid,
        action,
        runtime_version: runtime.version,
        not_ready: not_ready_reason(&runtime.health, runtime.cni.as_ref()),
        object_ttl: node_ttl(node.metadata.annotations.as_ref()),
    })
}

/// The pod CIDRs the control plane assigned: `spec.podCIDRs`, or `spec.podCIDR` from an API
/// server that fills only that.
fn pod_cidrs(node: &Node) -> Vec<String> {
    let Some(spec) = &node.spec else {
        return Vec::new();
    };
    match (&spec.pod_cidrs, &spec.pod_cidr) {
        (Some(cidrs), _) if !cidrs.is_empty() => cidrs.clone(),
        (_, Some(cidr)) if !cidr.is_empty() => vec![cidr.clone()],
        _ => Vec::new(),
    }
}

/// The runtime's version (`containerd://1.6.20`) and images; what cannot be read is left as
/// before (the version) or to the Node's list (the images).
async fn look_at_runtime(round: &Round) -> RuntimeView {
    let version = match round.port.call(cri::VersionRequest::default()).await {
        Ok(v) => format!("{}://{}", v.runtime_name, v.runtime_version),
        Err(err) => {
            tracing::debug!("runtime version unknown: {err}");
            round.runtime_version.clone()
        }
    };
    let images = match round.port.call(cri::ListImagesRequest::default()).await {
        Ok(list) => Some(node_images(list.images)),
        Err(err) => {
            tracing::debug!("runtime images unknown: {err}");
            None
        }
    };
    RuntimeView {
        health: round.health.clone(),
        cni: round.cni.clone(),
        pressure: round.pressure.clone(),
        version,
        images,
    }
}
