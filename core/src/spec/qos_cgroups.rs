//! The cgroups above the pods' own, as upstream's node-allocatable and QoS container managers
//! keep them: `<root>/kubepods`, which all pods together may not outgrow (the node's
//! allocatable when `enforceNodeAllocatable` holds `pods`, its capacity otherwise), and the
//! QoS cgroups `kubepods/burstable` (cpu shares from the Burstable pods' cpu requests, so they
//! get their share against the Guaranteed pods beside them) and `kubepods/besteffort` (the
//! minimum shares). Entry point: [`qos_cgroups`]; `sergeant_host::cgroup` writes the answer.

use k8s_openapi::api::core::v1::Pod;

use super::cgroup::pods_cgroup;
use super::pod_resources::{milli, pod_requests};
use super::qos::{qos_class, QosClass};
use super::resources::{cpu_shares, MIN_CPU_SHARES};
use crate::allocatable::PodsCgroupLimits;
use crate::context::NodeContext;

/// The limits one node-level cgroup is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeCgroup {
    /// The cgroup's path (`/kubepods/burstable`).
    pub path: String,
    /// `cpu.shares` (`cpu.weight` on cgroup v2).
    pub cpu_shares: i64,
    /// `memory.limit_in_bytes` (`memory.max`); `None`: unlimited.
    pub memory_limit_bytes: Option<i64>,
    /// `pids.max`; `None`: unlimited.
    pub pids_max: Option<i64>,
}

/// The node-level cgroups and their limits, parents first: `kubepods` with `all_pods`, then
/// `burstable` with the shares of the cpu requests of the Burstable pods among `active_pods`
/// (the pods not yet finished), then `besteffort` with the minimum. Nothing without
/// `cgroupsPerQOS` (pods then go straight under the cgroup root, as upstream) or on a node
/// without cgroups (Windows).
#[must_use]
pub fn qos_cgroups<'a>(
    node: &NodeContext,
    all_pods: PodsCgroupLimits,
    active_pods: impl IntoIterator<Item = &'a Pod>,
) -> Vec<NodeCgroup> {
    let Some(pods) =
        pods_cgroup(&node.cgroup_root, node.cgroups_per_qos).filter(|_| node.has_cgroups())
    else {
        return Vec::new();
    };
    let burstable_millis = active_pods
        .into_iter()
        .filter(|pod| qos_class(pod) == QosClass::Burstable)
        .map(|pod| pod_requests(pod).get("cpu").copied().map_or(0, milli))
        .fold(0_i64, i64::saturating_add);
    let unlimited = |path: String, cpu_shares: i64| NodeCgroup {
        path,
        cpu_shares,
        memory_limit_bytes: None,
        pids_max: None,
    };
    vec![
        NodeCgroup {
            path: pods.clone(),
            cpu_shares: cpu_shares(all_pods.cpu_millis),
            memory_limit_bytes: all_pods.memory_bytes,
            pids_max: all_pods.pids,
        },
        unlimited(format!("{pods}/burstable"), cpu_shares(burstable_millis)),
        unlimited(format!("{pods}/besteffort"), MIN_CPU_SHARES),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{node, pod_with, resources};
    use std::path::PathBuf;

    const GIB: i64 = 1 << 30;

    fn limits() -> PodsCgroupLimits {
        PodsCgroupLimits {
            cpu_millis: 3500,
            memory_bytes: Some(7 * GIB),
            pids: Some(30_000),
        }
    }

    fn pod(uid: &str, requests: &[(&str, &str)], limits: &[(&str, &str)]) -> Pod {
        let mut pod = pod_with(vec![resources("c", requests, limits)], vec![]);
        pod.metadata.uid = Some(uid.into());
        pod
    }

    #[test]
    fn kubepods_gets_the_pods_limits_and_the_qos_cgroups_their_shares() {
        let node = node(PathBuf::from("/tmp/x"));
        let guaranteed = pod(
            "g",
            &[("cpu", "1"), ("memory", "1Gi")],
            &[("cpu", "1"), ("memory", "1Gi")],
        );
        let burstable = [
            pod("b1", &[("cpu", "250m")], &[]),
            pod("b2", &[("cpu", "500m"), ("memory", "1Gi")], &[("cpu", "2")]),
            pod("b3", &[("memory", "64Mi")], &[]),
        ];
        let best_effort = pod("e", &[], &[]);
        let pods = [&guaranteed, &best_effort]
            .into_iter()
            .chain(burstable.iter());
        let plan = qos_cgroups(&node, limits(), pods);
        assert_eq!(
            plan,
            vec![
                NodeCgroup {
                    path: "/kubepods".into(),
                    cpu_shares: 3584,
                    memory_limit_bytes: Some(7 * GIB),
                    pids_max: Some(30_000),
                },
                NodeCgroup {
                    path: "/kubepods/burstable".into(),
                    cpu_shares: 768,
                    memory_limit_bytes: None,
                    pids_max: None,
                },
                NodeCgroup {
                    path: "/kubepods/besteffort".into(),
                    cpu_shares: 2,
                    memory_limit_bytes: None,
                    pids_max: None,
                },
            ]
        );
    }

    #[test]
    fn no_burstable_pod_leaves_the_minimum_shares_under_a_custom_root() {
        let mut node = node(PathBuf::from("/tmp/x"));
        node.cgroup_root = "/sergeant/".into();
        let plan = qos_cgroups(&node, limits(), []);
        let paths: Vec<_> = plan.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/sergeant/kubepods",
                "/sergeant/kubepods/burstable",
                "/sergeant/kubepods/besteffort"
            ]
        );
        assert_eq!(plan[1].cpu_shares, 2);
    }

    #[test]
    fn without_cgroups_per_qos_there_is_nothing_to_keep() {
        let mut node = node(PathBuf::from("/tmp/x"));
        node.cgroups_per_qos = false;
        assert!(qos_cgroups(&node, limits(), []).is_empty());
    }
}
