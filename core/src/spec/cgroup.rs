//! The pod cgroup: where a pod's sandbox and containers go (`/kubepods/burstable/pod<uid>`).
//! Making and removing it on the node is `sergeant_host::cgroup`.

use k8s_openapi::api::core::v1::{Container, Pod};

use super::pod_resources::{amount, milli, pod_level, pod_limits, pod_requests, units};
use super::qos::{qos_class, QosClass};
use super::resources::{cpu_quota, cpu_shares, CPU_PERIOD_US, MIN_CPU_SHARES};
use crate::context::NodeContext;

/// The cgroup of all pods below the cgroup root.
const PODS_CGROUP: &str = "kubepods";

/// The cgroup `pod`'s sandbox is created under (its CRI `cgroup_parent`). With
/// `cgroupsPerQOS` it is `<root>/kubepods/pod<uid>` for Guaranteed pods and
/// `<root>/kubepods/{burstable,besteffort}/pod<uid>` for the others; without it, the cgroup
/// root itself (`""` lets the runtime choose).
pub fn pod_cgroup_parent(pod: &Pod, node: &NodeContext) -> String {
    let Some(pods) = pods_cgroup(&node.cgroup_root, node.cgroups_per_qos) else {
        return node.cgroup_root.clone();
    };
    let uid = pod.metadata.uid.as_deref().unwrap_or_default();
    match qos_class(pod) {
        QosClass::Guaranteed => format!("{pods}/pod{uid}"),
        QosClass::Burstable => format!("{pods}/burstable/pod{uid}"),
        QosClass::BestEffort => format!("{pods}/besteffort/pod{uid}"),
    }
}

/// The pod's own cgroup when sergeant manages one (`cgroupsPerQOS` on a node with cgroups):
/// where its pod-level limits are written and read back; `None` otherwise.
#[must_use]
pub fn managed_pod_cgroup(pod: &Pod, node: &NodeContext) -> Option<String> {
    (node.cgroups_per_qos && node.has_cgroups()).then(|| pod_cgroup_parent(pod, node))
}

/// The cgroup of all pods, `<cgroup_root>/kubepods`, with `cgroupsPerQOS`; without it there
/// is none (pods go straight under the cgroup root).
#[must_use]
pub fn pods_cgroup(cgroup_root: &str, cgroups_per_qos: bool) -> Option<String> {
    cgroups_per_qos.then(|| format!("{}/{PODS_CGROUP}", cgroup_root.trim_end_matches('/')))
}

/// What the pod cgroup limits, as upstream's `ResourceConfigForPod` decides it: cpu shares
/// from the pod's cpu request; a cpu quota and a memory limit from the pod's limits when
/// every container limits that resource or the pod-level resources do (always for a
/// Guaranteed pod); a BestEffort pod gets the minimum shares and nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PodCgroupResources {
    /// `cpu.shares`.
    pub cpu_shares: i64,
    /// `cpu.cfs_quota_us` against [`PodCgroupResources::CPU_PERIOD_US`]; `None`: unlimited.
    pub cpu_quota_us: Option<i64>,
    /// `memory.limit_in_bytes`; `None`: unlimited.
    pub memory_limit_bytes: Option<i64>,
}

impl PodCgroupResources {
    /// The CFS period (`cpu.cfs_period_us`) of every quota, in microseconds.
    pub const CPU_PERIOD_US: i64 = CPU_PERIOD_US;
}

/// The limits of `pod`'s cgroup (see [`PodCgroupResources`]).
#[must_use]
pub fn pod_cgroup_resources(pod: &Pod) -> PodCgroupResources {
    let class = qos_class(pod);
    if class == QosClass::BestEffort {
        return PodCgroupResources {
            cpu_shares: MIN_CPU_SHARES,
            cpu_quota_us: None,
            memory_limit_bytes: None,
        };
    }
    let (requests, limits) = (pod_requests(pod), pod_limits(pod));
    let pod_limit = |name: &str| {
        pod_level(pod)
            .and_then(|r| amount(r.limits.as_ref(), name))
            .is_some_and(|v| v > 0)
    };
    let every_container_limits = |name: &str| {
        crate::context::all_containers(pod).all(|(_, c): (String, &Container)| {
            amount(c.resources.as_ref().and_then(|r| r.limits.as_ref()), name)
                .is_some_and(|v| v > 0)
        })
    };
    let declared = |name: &str| {
        class == QosClass::Guaranteed || every_container_limits(name) || pod_limit(name)
    };
    let cpu_limit = limits.get("cpu").copied().map_or(0, milli);
    PodCgroupResources {
        cpu_shares: cpu_shares(requests.get("cpu").copied().map_or(0, milli)),
        cpu_quota_us: (declared("cpu") && cpu_limit > 0).then(|| cpu_quota(cpu_limit)),
        memory_limit_bytes: declared("memory")
            .then(|| limits.get("memory").copied().map_or(0, units))
            .filter(|bytes| *bytes > 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{node, pod_with, resources};
    use std::path::PathBuf;

    #[test]
    fn the_parent_follows_the_qos_class() {
        let mut node = node(PathBuf::from("/tmp/x"));
        let full = &[("cpu", "1"), ("memory", "1Gi")];
        let guaranteed = pod_with(vec![resources("a", full, full)], vec![]);
        let burstable = pod_with(vec![resources("a", &[("cpu", "1")], &[])], vec![]);
        let best_effort = pod_with(vec![resources("a", &[], &[])], vec![]);
        assert_eq!(pod_cgroup_parent(&guaranteed, &node), "/kubepods/poduid-1");
        assert_eq!(
            pod_cgroup_parent(&burstable, &node),
            "/kubepods/burstable/poduid-1"
        );
        assert_eq!(
            pod_cgroup_parent(&best_effort, &node),
            "/kubepods/besteffort/poduid-1"
        );
        node.cgroup_root = "/".into();
        assert_eq!(
            pod_cgroup_parent(&best_effort, &node),
            "/kubepods/besteffort/poduid-1"
        );
        node.cgroup_root = "/custom/".into();
        assert_eq!(
            pod_cgroup_parent(&guaranteed, &node),
            "/custom/kubepods/poduid-1"
        );
        node.cgroups_per_qos = false;
        assert_eq!(pod_cgroup_parent(&guaranteed, &node), "/custom/");
    }

    #[test]
    fn the_pod_cgroup_limits_follow_the_pod_level_or_the_container_totals() {
        use crate::testing::with_pod_resources;
        let full = &[("cpu", "500m"), ("memory", "128Mi")];
        let two = pod_with(
            vec![resources("a", full, full), resources("b", full, full)],
            vec![],
        );
        assert_eq!(
            pod_cgroup_resources(&two),
            PodCgroupResources {
                cpu_shares: 1024,
                cpu_quota_us: Some(100_000),
                memory_limit_bytes: Some(256 << 20),
            }
        );
        // One container without a memory limit: no memory limit for the pod.
        let partial = pod_with(
            vec![
                resources("a", full, full),
                resources("b", &[("cpu", "100m")], &[("cpu", "100m")]),
            ],
            vec![],
        );
        let partial = pod_cgroup_resources(&partial);
        assert_eq!(
            (partial.cpu_quota_us, partial.memory_limit_bytes),
            (Some(60_000), None)
        );
        // Pod-level limits count however the containers are set.
        let pod_level = with_pod_resources(
            pod_with(vec![resources("a", &[], &[])], vec![]),
            &[("cpu", "200m"), ("memory", "64Mi")],
            &[("cpu", "400m"), ("memory", "64Mi")],
        );
        assert_eq!(
            pod_cgroup_resources(&pod_level),
            PodCgroupResources {
                cpu_shares: 204,
                cpu_quota_us: Some(40_000),
                memory_limit_bytes: Some(64 << 20),
            }
        );
        let best_effort = pod_with(vec![resources("a", &[], &[])], vec![]);
        assert_eq!(
            pod_cgroup_resources(&best_effort),
            PodCgroupResources {
                cpu_shares: 2,
                cpu_quota_us: None,
                memory_limit_bytes: None,
            }
        );
    }
}
