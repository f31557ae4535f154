//! What an evicted or refused pod is told, in upstream's words: the status reason `Evicted`,
//! the message naming the starved resource, the threshold and what was available, and each
//! container that used more than it requested; and the admission check that refuses pods
//! while the node is under pressure.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Pod;

use super::signals::{Pressure, Resource};
use crate::admission::Rejection;
use crate::source::is_static_pod;
use crate::spec::{qos_class, QosClass};

/// The status reason of an evicted pod and of a pod refused under pressure.
pub const REASON: &str = "Evicted";

/// The priority from which a pod is critical (upstream's `system-cluster-critical`).
pub const CRITICAL_PRIORITY: i32 = 2_000_000_000;

/// The taint a BestEffort pod tolerates to be admitted under memory pressure.
pub const MEMORY_PRESSURE_TAINT: &str = "node.kubernetes.io/memory-pressure";

/// A container's use of the starved resource, for the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerUsage {
    /// Its name.
    pub name: String,
    /// What it used.
    pub used: u64,
    /// What it requested.
    pub requested: u64,
}

/// The message of a pod evicted for `resource`: the threshold's `quantity`, what was
/// `available`, and every container of `containers` using more than it requested.
#[must_use]
pub fn evicted(
    resource: Resource,
    quantity: u64,
    available: u64,
    containers: &[ContainerUsage],
) -> String {
    let mut message = format!(
        "The node was low on resource: {resource}. Threshold quantity: {}, available: {}. ",
        format_amount(resource, quantity),
        format_amount(resource, available)
    );
    for container in containers.iter().filter(|c| c.used > c.requested) {
        message.push_str(&format!(
            "Container {} was using {}, request is {}, has larger consumption of {resource}. ",
            container.name,
            format_amount(resource, container.used),
            format_amount(resource, container.requested)
        ));
    }
    message
}

/// An amount as a Kubernetes quantity: bytes in the largest binary unit that divides them
/// (`100Mi`, `1536Ki`, `1000`), counts as plain numbers.
#[must_use]
pub fn format_amount(resource: Resource, value: u64) -> String {
    if !matches!(resource, Resource::Memory | Resource::EphemeralStorage) || value == 0 {
        return value.to_string();
    }
    let units = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let mut scaled = value;
    let mut unit = 0;
    while unit + 1 < units.len() && scaled.is_multiple_of(1024) {
        scaled /= 1024;
        unit += 1;
    }
    format!("{scaled}{}", units[unit])
}

/// Whether a pod is critical: static, or of a critical priority. Critical pods are always
/// admitted and never evicted.
#[must_use]
pub fn is_critical(pod: &Pod) -> bool {
    is_static_pod(pod)
        || pod
            .spec
            .as_ref()
            .and_then(|s| s.priority)
            .is_some_and(|p| p >= CRITICAL_PRIORITY)
}

/// Whether `pod` may start while the node reports `pressure`: always without pressure and
/// for critical pods; under memory pressure alone, unless it is BestEffort and does not
/// tolerate the memory-pressure taint; under any other pressure, never.
///
/// # Errors
/// The [`Rejection`] (reason `Evicted`, "The node had condition: [...]. ") when it may not.
pub fn admit(pod: &Pod, pressure: &BTreeSet<Pressure>) -> Result<(), Rejection> {
    if pressure.is_empty() || is_critical(pod) {
        return Ok(());
    }
    let memory_only = pressure.iter().all(|p| *p == Pressure::Memory);
    if memory_only && (qos_class(pod) != QosClass::BestEffort || tolerates_memory_pressure(pod)) {
        return Ok(());
    }
    let names: Vec<&str> = pressure.iter().map(|p| p.condition_type()).collect();
    Err(Rejection {
        reason: REASON.to_owned(),
        message: format!("The node had condition: [{}]. ", names.join(" ")),
    })
}

fn tolerates_memory_pressure(pod: &Pod) -> bool {
    pod.spec
        .iter()
        .flat_map(|s| s.tolerations.iter().flatten())
        .any(|t| {
            let key_matches = match t.key.as_deref() {
                None | Some("") => t.operator.as_deref() == Some("Exists"),
                Some(key) => key == MEMORY_PRESSURE_TAINT,
            };
            let effect_matches =
                matches!(t.effect.as_deref(), None | Some("") | Some("NoSchedule"));
            key_matches && effect_matches
        })
}
