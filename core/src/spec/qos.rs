//! The pod's quality-of-service class, which decides its cgroup and its containers' OOM scores.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, ResourceRequirements};

use super::pod_resources::{amount, pod_level};
use crate::context::all_containers;

/// How the node treats a pod under memory pressure and where its cgroup goes, from its cpu
/// and memory requests and limits (the upstream classes, so `kubectl` shows the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QosClass {
    /// Every container limits cpu and memory, and requests exactly its limits.
    Guaranteed,
    /// Something is requested or limited, but not as Guaranteed needs.
    Burstable,
    /// No container requests or limits cpu or memory.
    BestEffort,
}

impl QosClass {
    /// The name Kubernetes uses (`status.qosClass`).
    pub fn as_str(self) -> &'static str {
        match self {
            QosClass::Guaranteed => "Guaranteed",
            QosClass::Burstable => "Burstable",
            QosClass::BestEffort => "BestEffort",
        }
    }
}

/// The QoS class of `pod`, as upstream computes it: from its pod-level `spec.resources` when
/// it sets cpu or memory there (PodLevelResources), else from each container, init
/// containers included — a pod is Guaranteed when every container is, BestEffort when every
/// container is, and Burstable otherwise. A quantity that does not parse counts as absent
/// (creating the container then fails with the precise error from `container_config`).
pub fn qos_class(pod: &Pod) -> QosClass {
    if let Some(resources) = pod_level(pod) {
        return requirements_class(Some(resources));
    }
    let mut class = None;
    for (_, container) in all_containers(pod) {
        match (class, requirements_class(container.resources.as_ref())) {
            (_, QosClass::Burstable) => return QosClass::Burstable,
            (None, own) => class = Some(own),
            (Some(pod_class), own) if pod_class != own => return QosClass::Burstable,
            _ => {}
        }
    }
    class.unwrap_or(QosClass::BestEffort)
}

/// The class of one set of requests and limits: Guaranteed when cpu and memory are each
/// requested at their (nonzero) limits, BestEffort when nothing at all is set or neither is
/// requested nor limited, Burstable otherwise.
fn requirements_class(resources: Option<&ResourceRequirements>) -> QosClass {
    let requests = resources.and_then(|r| r.requests.as_ref());
    let limits = resources.and_then(|r| r.limits.as_ref());
    if requests.is_none_or(BTreeMap::is_empty) && limits.is_none_or(BTreeMap::is_empty) {
        return QosClass::BestEffort;
    }
    let of = |name: &str| {
        // As the API server's defaulting does (and a manifest's pod gets the same), a limit
        // without a request requests the limit.
        let limit = amount(limits, name);
        let request = amount(requests, name).or(limit);
        match (request.unwrap_or(0), limit.unwrap_or(0)) {
            (r, l) if r != l => QosClass::Burstable,
            (0, _) => QosClass::BestEffort,
            _ => QosClass::Guaranteed,
        }
    };
    match (of("cpu"), of("memory")) {
        (a, b) if a == b => a,
        _ => QosClass::Burstable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{pod_with, resources, with_pod_resources};

    #[test]
    fn nothing_set_is_best_effort() {
        assert_eq!(
            qos_class(&pod_with(vec![resources("a", &[], &[])], vec![])),
            QosClass::BestEffort
        );
    }

    #[test]
    fn limits_equal_to_requests_everywhere_is_guaranteed() {
        let full = &[("cpu", "1"), ("memory", "1Gi")];
        let pod = pod_with(
            vec![resources("a", full, full), resources("b", &[], full)],
            vec![resources("i", &[], full)],
        );
        assert_eq!(qos_class(&pod), QosClass::Guaranteed);
    }

    #[test]
    fn a_missing_limit_or_a_smaller_request_is_burstable() {
        let full = &[("cpu", "1"), ("memory", "1Gi")];
        let only_cpu = &[("cpu", "1")];
        let pod = pod_with(
            vec![resources("a", full, full), resources("b", &[], only_cpu)],
            vec![],
        );
        assert_eq!(qos_class(&pod), QosClass::Burstable);
        let smaller = pod_with(
            vec![resources("a", &[("cpu", "500m"), ("memory", "1Gi")], full)],
            vec![],
        );
        assert_eq!(qos_class(&smaller), QosClass::Burstable);
        let init_only = pod_with(
            vec![resources("a", &[], &[])],
            vec![resources("i", &[("memory", "1Mi")], &[])],
        );
        assert_eq!(qos_class(&init_only), QosClass::Burstable);
        assert_eq!(QosClass::Burstable.as_str(), "Burstable");
    }

    #[test]
    fn pod_level_resources_decide_the_class_when_set() {
        let full = &[("cpu", "1"), ("memory", "1Gi")];
        let bare = pod_with(vec![resources("a", &[], &[])], vec![]);
        assert_eq!(
            qos_class(&with_pod_resources(bare.clone(), full, full)),
            QosClass::Guaranteed
        );
        let below_limits = with_pod_resources(bare.clone(), &[("cpu", "500m")], full);
        assert_eq!(qos_class(&below_limits), QosClass::Burstable);
        // Containers that would be Guaranteed do not make a Burstable pod-level spec so.
        let guaranteed_containers = pod_with(vec![resources("a", full, full)], vec![]);
        assert_eq!(
            qos_class(&with_pod_resources(
                guaranteed_containers,
                &[("memory", "2Gi")],
                &[]
            )),
            QosClass::Burstable
        );
        // Pod-level resources pods may not set (ephemeral storage) leave the containers' class.
        assert_eq!(
            qos_class(&with_pod_resources(
                bare,
                &[("ephemeral-storage", "1Gi")],
                &[]
            )),
            QosClass::BestEffort
        );
    }

    #[test]
    fn a_guaranteed_and_a_best_effort_container_make_a_burstable_pod() {
        let full = &[("cpu", "1"), ("memory", "1Gi")];
        let pod = pod_with(
            vec![resources("a", full, full), resources("b", &[], &[])],
            vec![],
        );
        assert_eq!(qos_class(&pod), QosClass::Burstable);
        // Equal totals are not enough: each container must request its own limits.
        let uneven = pod_with(
            vec![
                resources("a", &[("cpu", "2"), ("memory", "1Gi")], full),
                resources("b", &[("cpu", "0"), ("memory", "1Gi")], full),
            ],
            vec![],
        );
        assert_eq!(qos_class(&uneven), QosClass::Burstable);
    }
}
