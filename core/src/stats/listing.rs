//! The runtime listings the kubelet API answers from: this node's ready sandboxes and running
//! containers (a runtime may be shared by several nodes, so every listing is scoped to the
//! node's label). `/runningpods/` and `/stats/summary` both start from them.

use std::collections::HashMap;

use k8s_cri::v1 as cri;

use crate::labels;

/// The label selector of node `node`'s runtime objects.
#[must_use]
pub fn node_selector(node: &str) -> HashMap<String, String> {
    HashMap::from([(labels::NODE.to_owned(), node.to_owned())])
}

/// Lists node `node`'s ready sandboxes.
#[must_use]
pub fn ready_sandboxes(node: &str) -> cri::ListPodSandboxRequest {
    cri::ListPodSandboxRequest {
        filter: Some(cri::PodSandboxFilter {
            state: Some(cri::PodSandboxStateValue {
                state: cri::PodSandboxState::SandboxReady.into(),
            }),
            label_selector: node_selector(node),
            ..cri::PodSandboxFilter::default()
        }),
    }
}

/// Lists node `node`'s running containers.
#[must_use]
pub fn running_containers(node: &str) -> cri::ListContainersRequest {
    cri::ListContainersRequest {
        filter: Some(cri::ContainerFilter {
            state: Some(cri::ContainerStateValue {
                state: cri::ContainerState::ContainerRunning.into(),
            }),
            label_selector: node_selector(node),
            ..cri::ContainerFilter::default()
        }),
    }
}
