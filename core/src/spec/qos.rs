//! The pod's quality-of-service class, which decides its cgroup and its containers' OOM scores.

use k8s_openapi::api::core::v1::Pod;

use super::identity::all_containers;
use super::quantity::{container_amounts, Amounts};

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

/// The QoS class of `pod`, over all its containers, init containers included. A container
/// whose quantities do not parse counts as requesting nothing (its creation fails anyway with
/// the precise error from `container_config`).
pub fn qos_class(pod: &Pod) -> QosClass {
    let mut requests = Sum::default();
    let mut limits = Sum::default();
    let mut every_container_limits_both = true;
    for (field, container) in all_containers(pod) {
        let amounts = container_amounts("", &field, container).unwrap_or_default();
        requests.add(amounts.requests);
        limits.add(amounts.limits);
        if amounts.limits.cpu_milli.is_none() || amounts.limits.memory_bytes.is_none() {
            every_container_limits_both = false;
        }
    }
    if requests.is_empty() && limits.is_empty() {
        QosClass::BestEffort
    } else if every_container_limits_both && requests == limits {
        QosClass::Guaranteed
    } else {
        QosClass::Burstable
    }
}

/// Per-resource totals; `None` when no container sets the resource.
#[derive(Debug, Default, PartialEq, Eq)]
struct Sum {
    cpu_milli: Option<i64>,
    memory_bytes: Option<i64>,
}

impl Sum {
    fn add(&mut self, amounts: Amounts) {
        let add = |total: Option<i64>, value: Option<i64>| match (total, value) {
            (Some(t), Some(v)) => Some(t.saturating_add(v)),
            (t, v) => t.or(v),
        };
        self.cpu_milli = add(self.cpu_milli, amounts.cpu_milli);
        self.memory_bytes = add(self.memory_bytes, amounts.memory_bytes);
    }

    fn is_empty(&self) -> bool {
        self.cpu_milli.is_none() && self.memory_bytes.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{pod_with, resources};

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
}
