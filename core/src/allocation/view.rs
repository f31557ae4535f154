//! What a pod asks for against what it was allocated: each container's `resources` (init
//! containers and sidecars among them, all resizable in this release) and the pod-level
//! `spec.resources`. Two lists are the same when they hold the same amounts (`1` is `1000m`;
//! an empty list is no list), as upstream's semantic equality has it.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, Pod, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;
use serde::{Deserialize, Serialize};
use sergeant_config::Quantity;

/// Whether `desired` asks for other resources than `allocated` was given.
#[must_use]
pub fn resize_requested(allocated: &Pod, desired: &Pod) -> bool {
    if pod_level_resize_requested(allocated, desired) {
        return true;
    }
    containers(desired).any(|wanted| {
        containers(allocated)
            .find(|given| given.name == wanted.name)
            .is_some_and(|given| !same(given.resources.as_ref(), wanted.resources.as_ref()))
    })
}

/// Whether `desired` asks for other pod-level `spec.resources` than `allocated` was given:
/// the part of a resize the `InPlacePodLevelResourcesVerticalScaling` gate switches.
#[must_use]
pub fn pod_level_resize_requested(allocated: &Pod, desired: &Pod) -> bool {
    !same(pod_level(allocated), pod_level(desired))
}

/// `desired` with the resources `allocated` was given: its containers' (matched by name; one
/// `allocated` does not have keeps its own) and its pod-level ones. The rest — metadata,
/// every other field of the spec — is `desired`'s.
#[must_use]
pub fn with_allocation(desired: &Pod, allocated: &Pod) -> Pod {
    PodAllocation::of(allocated).apply(desired)
}

/// What a pod was allocated: its pod-level `spec.resources` and each container's `resources`,
/// by container name — what the allocation checkpoint keeps of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PodAllocation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pod: Option<ResourceRequirements>,
    #[serde(default)]
    containers: BTreeMap<String, Option<ResourceRequirements>>,
}

impl PodAllocation {
    /// What `pod`, at its allocation, was given.
    #[must_use]
    pub fn of(pod: &Pod) -> Self {
        Self {
            pod: pod_level(pod).cloned(),
            containers: containers(pod)
                .map(|c| (c.name.clone(), c.resources.clone()))
                .collect(),
        }
    }

    /// `desired` with these resources (see [`with_allocation`]).
    #[must_use]
    pub fn apply(&self, desired: &Pod) -> Pod {
        let mut pod = desired.clone();
        let Some(spec) = pod.spec.as_mut() else {
            return pod;
        };
        spec.resources.clone_from(&self.pod);
        let regular = spec.containers.iter_mut();
        for container in regular.chain(spec.init_containers.iter_mut().flatten()) {
            if let Some(given) = self.containers.get(&container.name) {
                container.resources.clone_from(given);
            }
        }
        pod
    }
}

/// The pod's own `spec.resources`.
fn pod_level(pod: &Pod) -> Option<&ResourceRequirements> {
    pod.spec.as_ref()?.resources.as_ref()
}

/// The pod's init and regular containers.
fn containers(pod: &Pod) -> impl Iterator<Item = &Container> {
    pod.spec.iter().flat_map(|s| {
        s.init_containers
            .iter()
            .flatten()
            .chain(s.containers.iter())
    })
}

/// Whether two requirements hold the same requests, limits and claims.
fn same(a: Option<&ResourceRequirements>, b: Option<&ResourceRequirements>) -> bool {
    fn lists(r: Option<&ResourceRequirements>) -> [BTreeMap<&str, Result<i128, &str>>; 2] {
        [
            amounts(r.and_then(|r| r.requests.as_ref())),
            amounts(r.and_then(|r| r.limits.as_ref())),
        ]
    }
    let claims = |r: Option<&ResourceRequirements>| {
        r.and_then(|r| r.claims.clone())
            .filter(|c| !c.is_empty())
            .unwrap_or_default()
    };
    lists(a) == lists(b) && claims(a) == claims(b)
}

/// A list's amounts by name: exact for a quantity that parses, its text for one that does not
/// (the API server refuses such a pod; a manifest's fails when its container is made).
fn amounts(list: Option<&BTreeMap<String, ApiQuantity>>) -> BTreeMap<&str, Result<i128, &str>> {
    list.into_iter()
        .flatten()
        .map(|(name, quantity)| {
            let amount = quantity
                .0
                .parse::<Quantity>()
                .map(|q| q.nanos())
                .map_err(|_| quantity.0.as_str());
            (name.as_str(), amount)
        })
        .collect()
}
