//! A pod's resources as a whole: its pod-level `spec.resources` (PodLevelResources) and the
//! totals of its containers' requests and limits, counted as upstream counts them for
//! scheduling, the pod cgroup and `status.allocatedResources`: regular containers and sidecars
//! add up, an init container needs its own amount plus the sidecars started before it, and the
//! pod needs the larger of the two. Entry points: [`pod_level`], [`pod_requests`],
//! [`pod_limits`]; [`without_pod_level`] for a node whose PodLevelResources gate is off.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Container, Pod, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;
use sergeant_config::Quantity;

/// Amounts by resource name, in billionths of the base unit (exact, so sums never round).
pub type Totals = BTreeMap<String, i128>;

/// The prefix of huge page resources (`hugepages-2Mi`), which pods may set at pod level.
const HUGEPAGES_PREFIX: &str = "hugepages-";

/// Whether a pod may set `name` at pod level: cpu, memory and huge pages, as upstream.
fn pod_level_resource(name: &str) -> bool {
    name == "cpu" || name == "memory" || name.starts_with(HUGEPAGES_PREFIX)
}

/// The pod's `spec.resources` when it sets a resource pods may set at pod level; then these,
/// not its containers', decide its QoS class, its pod cgroup and the limits of containers
/// that set none.
#[must_use]
pub fn pod_level(pod: &Pod) -> Option<&ResourceRequirements> {
    let resources = pod.spec.as_ref()?.resources.as_ref()?;
    let sets = |list: &Option<BTreeMap<String, ApiQuantity>>| {
        list.iter()
            .flatten()
            .any(|(name, _)| pod_level_resource(name))
    };
    (sets(&resources.requests) || sets(&resources.limits)).then_some(resources)
}

/// The pod as a node with the PodLevelResources feature gate off sees it: without its
/// pod-level `spec.resources`, so its QoS class, pod cgroup, admission, eviction ranking and
/// downward API values come from its containers alone, as upstream's kubelet does then. The
/// pod itself (shared) when it sets none.
#[must_use]
pub fn without_pod_level(pod: &Arc<Pod>) -> Arc<Pod> {
    if pod
        .spec
        .as_ref()
        .is_none_or(|spec| spec.resources.is_none())
    {
        return Arc::clone(pod);
    }
    let mut bare = Pod::clone(pod);
    if let Some(spec) = bare.spec.as_mut() {
        spec.resources = None;
    }
    Arc::new(bare)
}

/// The exact amount of `name` in `list`; `None` when it is absent or does not parse (the API
/// server refuses such a pod; a manifest's fails with its precise error when its container
/// is made).
#[must_use]
pub fn amount(list: Option<&BTreeMap<String, ApiQuantity>>, name: &str) -> Option<i128> {
    let quantity = list?.get(name)?;
    quantity.0.parse::<Quantity>().ok().map(|q| q.nanos())
}

/// The memory the container itself requests, in whole bytes (0: none), as it is recorded on
/// the container it runs as ([`crate::labels::CONTAINER_MEMORY_REQUEST`]).
#[must_use]
pub fn memory_request_bytes(container: &Container) -> i64 {
    let requests = container
        .resources
        .as_ref()
        .and_then(|r| r.requests.as_ref());
    amount(requests, "memory").map_or(0, units)
}

/// Millicores of an exact cpu amount, rounded up as Kubernetes does, saturating.
#[must_use]
pub fn milli(nanos: i128) -> i64 {
    Quantity::from_nanos(nanos).milli_value()
}

/// Whole units (bytes) of an exact amount, rounded up, saturating.
#[must_use]
pub fn units(nanos: i128) -> i64 {
    Quantity::from_nanos(nanos).value()
}

/// What the pod requests: its containers' requests counted as the scheduler counts them,
/// with the pod-level requests in place of the total for the resources they set, plus the
/// pod's `overhead` (upstream's `PodRequests`).
#[must_use]
pub fn pod_requests(pod: &Pod) -> Totals {
    let mut totals = aggregate(pod, |r| r.requests.as_ref());
    if let Some(requests) = pod_level(pod).and_then(|r| r.requests.as_ref()) {
        override_pod_level(&mut totals, requests);
    }
    for (name, value) in overhead(pod) {
        let total = totals.entry(name).or_default();
        *total = total.saturating_add(value);
    }
    totals
}

/// The pod's limits: its containers' limits counted as [`pod_requests`] counts requests, with
/// the pod-level limits in place for the resources they set, and the pod's `overhead` added
/// to every limit that is set (upstream's `PodLimits`).
#[must_use]
pub fn pod_limits(pod: &Pod) -> Totals {
    let mut totals = aggregate(pod, |r| r.limits.as_ref());
    if let Some(limits) = pod_level(pod).and_then(|r| r.limits.as_ref()) {
        override_pod_level(&mut totals, limits);
    }
    for (name, value) in overhead(pod) {
        if let Some(total) = totals.get_mut(&name).filter(|t| **t != 0) {
            *total = total.saturating_add(value);
        }
    }
    totals
}

/// `totals` as an API resource list: cpu in decimal form (`250m`, `2`), whole amounts of
/// other resources in binary form as the API writes bytes (`256Mi`, `1536`).
#[must_use]
pub fn to_list(totals: &Totals) -> BTreeMap<String, ApiQuantity> {
    totals
        .iter()
        .map(|(name, nanos)| {
            let whole = nanos % 1_000_000_000 == 0;
            let text = match i64::try_from(nanos / 1_000_000_000) {
                Ok(value) if whole && name != "cpu" => binary(value),
                _ => Quantity::from_nanos(*nanos).as_str().to_owned(),
            };
            (name.clone(), ApiQuantity(text))
        })
        .collect()
}

/// `value` with the largest binary suffix that divides it exactly (`33554432` → `32Mi`), as
/// the API writes a byte count.
#[must_use]
pub fn binary(value: i64) -> String {
    const SUFFIXES: [&str; 6] = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let mut scaled = value;
    let mut suffix = "";
    for next in SUFFIXES {
        if scaled == 0 || scaled % 1024 != 0 {
            break;
        }
        scaled /= 1024;
        suffix = next;
    }
    format!("{scaled}{suffix}")
}

fn override_pod_level(totals: &mut Totals, list: &BTreeMap<String, ApiQuantity>) {
    for name in list.keys().filter(|name| pod_level_resource(name)) {
        if let Some(value) = amount(Some(list), name) {
            totals.insert(name.clone(), value);
        }
    }
}

fn overhead(pod: &Pod) -> Totals {
    let list = pod.spec.as_ref().and_then(|s| s.overhead.as_ref());
    totals_of(list)
}

fn totals_of(list: Option<&BTreeMap<String, ApiQuantity>>) -> Totals {
    list.iter()
        .flat_map(|l| l.keys())
        .filter_map(|name| amount(list, name).map(|value| (name.clone(), value)))
        .collect()
}

/// The sidecar-aware total of one side (requests or limits) of every container.
fn aggregate(
    pod: &Pod,
    side: impl Fn(&ResourceRequirements) -> Option<&BTreeMap<String, ApiQuantity>>,
) -> Totals {
    let Some(spec) = pod.spec.as_ref() else {
        return Totals::new();
    };
    let of = |c: &Container| totals_of(c.resources.as_ref().and_then(&side));
    let mut total = Totals::new();
    for container in &spec.containers {
        add(&mut total, &of(container));
    }
    let mut sidecars = Totals::new();
    let mut init_peak = Totals::new();
    for container in spec.init_containers.iter().flatten() {
        let own = of(container);
        let needs = if container.restart_policy.as_deref() == Some("Always") {
            add(&mut total, &own);
            add(&mut sidecars, &own);
            sidecars.clone()
        } else {
            let mut combined = own;
            add(&mut combined, &sidecars);
            combined
        };
        raise(&mut init_peak, &needs);
    }
    raise(&mut total, &init_peak);
    total
}

fn add(total: &mut Totals, more: &Totals) {
    for (name, value) in more {
        let entry = total.entry(name.clone()).or_default();
        *entry = entry.saturating_add(*value);
    }
}

fn raise(total: &mut Totals, other: &Totals) {
    for (name, value) in other {
        let entry = total.entry(name.clone()).or_insert(*value);
        *entry = (*entry).max(*value);
    }
}

#[cfg(test)]
#[path = "pod_resources_tests.rs"]
mod tests;
