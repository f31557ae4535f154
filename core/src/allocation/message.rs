//! The messages of upstream's resize events: a prefix naming what happened, then a JSON
//! summary of the resources the pod's spec asks for, its generation and, for a pending
//! resize or one that could not be carried out, why (`Pod resize Deferred:
//! {"containers":[…],"generation":2,"error":"…"}`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, ResourceClaim};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;
use serde::Serialize;

use super::PendingResize;
use crate::kind::{all_containers, ContainerKind};

/// The message of a `ResizeDeferred` or `ResizeInfeasible` event of `pod`.
#[must_use]
pub fn pending_event(pod: &Pod, pending: &PendingResize) -> String {
    message(
        &format!("Pod resize {}", pending.reason.as_str()),
        pod,
        &pending.message,
    )
}

/// The message of the `ResizeStarted` event of `pod`, whose resize was just allocated.
#[must_use]
pub fn started_event(pod: &Pod) -> String {
    message("Pod resize started", pod, "")
}

/// The message of the `ResizeError` event of `pod`, whose allocated resize could not be
/// carried out for the reason `error` says.
#[must_use]
pub fn error_event(pod: &Pod, error: &str) -> String {
    message("Pod resize error", pod, error)
}

fn message(prefix: &str, pod: &Pod, error: &str) -> String {
    let mut summary = Summary {
        init_containers: Vec::new(),
        containers: Vec::new(),
        generation: pod.metadata.generation.unwrap_or(0),
        error,
    };
    for (container, kind) in all_containers(pod) {
        let resources = container.resources.as_ref();
        let entry = Entry {
            name: &container.name,
            resources: Requirements {
                limits: resources
                    .and_then(|r| r.limits.as_ref())
                    .filter(|l| !l.is_empty()),
                requests: resources
                    .and_then(|r| r.requests.as_ref())
                    .filter(|l| !l.is_empty()),
                claims: resources
                    .and_then(|r| r.claims.as_ref())
                    .filter(|c| !c.is_empty()),
            },
        };
        match kind {
            ContainerKind::Regular => summary.containers.push(entry),
            _ => summary.init_containers.push(entry),
        }
    }
    match serde_json::to_string(&summary) {
        Ok(json) => format!("{prefix}: {json}"),
        Err(_) => prefix.to_owned(),
    }
}

/// Upstream's summary, its fields in its order.
#[derive(Serialize)]
struct Summary<'a> {
    #[serde(rename = "initContainers", skip_serializing_if = "Vec::is_empty")]
    init_containers: Vec<Entry<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    containers: Vec<Entry<'a>>,
    generation: i64,
    #[serde(skip_serializing_if = "str::is_empty")]
    error: &'a str,
}

#[derive(Serialize)]
struct Entry<'a> {
    name: &'a str,
    resources: Requirements<'a>,
}

/// A container's resources as upstream's `ResourceRequirements` writes them.
#[derive(Serialize)]
struct Requirements<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    limits: Option<&'a BTreeMap<String, ApiQuantity>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    requests: Option<&'a BTreeMap<String, ApiQuantity>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    claims: Option<&'a Vec<ResourceClaim>>,
}
