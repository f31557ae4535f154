//! The pod cgroup: where a pod's sandbox and containers go (`/kubepods/burstable/pod<uid>`).
//! Making and removing it on the node is `sergeant_host::cgroup`.

use k8s_openapi::api::core::v1::Pod;

use super::node::NodeContext;
use super::qos::{qos_class, QosClass};

/// The cgroup of all pods below the cgroup root.
const PODS_CGROUP: &str = "kubepods";

/// The cgroup `pod`'s sandbox is created under (its CRI `cgroup_parent`). With
/// `cgroupsPerQOS` it is `<root>/kubepods/pod<uid>` for Guaranteed pods and
/// `<root>/kubepods/{burstable,besteffort}/pod<uid>` for the others; without it, the cgroup
/// root itself (`""` lets the runtime choose).
pub fn pod_cgroup_parent(pod: &Pod, node: &NodeContext) -> String {
    if !node.cgroups_per_qos {
        return node.cgroup_root.clone();
    }
    let root = node.cgroup_root.trim_end_matches('/');
    let uid = pod.metadata.uid.as_deref().unwrap_or_default();
    match qos_class(pod) {
        QosClass::Guaranteed => format!("{root}/{PODS_CGROUP}/pod{uid}"),
        QosClass::Burstable => format!("{root}/{PODS_CGROUP}/burstable/pod{uid}"),
        QosClass::BestEffort => format!("{root}/{PODS_CGROUP}/besteffort/pod{uid}"),
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
}
