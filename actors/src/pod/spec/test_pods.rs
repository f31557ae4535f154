//! Pods and node contexts the unit tests of `spec` and `volumes` build on.

use std::path::PathBuf;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use sergeant_messages::pods::core::{Container, Pod, PodSpec, ResourceRequirements};

use super::NodeContext;

/// A pod `ns/web` with UID `uid-1` and the given containers.
pub(crate) fn pod_with(containers: Vec<Container>, init: Vec<Container>) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("ns".into()),
            uid: Some("uid-1".into()),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers,
            init_containers: (!init.is_empty()).then_some(init),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A container named `name` with the given requests and limits.
pub(crate) fn resources(
    name: &str,
    requests: &[(&str, &str)],
    limits: &[(&str, &str)],
) -> Container {
    let map = |pairs: &[(&str, &str)]| {
        (!pairs.is_empty()).then(|| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), ApiQuantity(v.to_string())))
                .collect()
        })
    };
    Container {
        name: name.into(),
        image: Some("img:1".into()),
        resources: Some(ResourceRequirements {
            requests: map(requests),
            limits: map(limits),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A node rooted at `root` with cluster DNS 10.96.0.10 and domain `cluster.local`.
pub(crate) fn node(root: PathBuf) -> NodeContext {
    NodeContext {
        node_name: "node-a".into(),
        node_ip: Some("192.0.2.1".parse().expect("ip")),
        pod_log_root: root.join("logs"),
        resolv_conf: root.join("resolv.conf"),
        root_dir: root,
        cluster_dns: vec!["10.96.0.10".parse().expect("ip")],
        cluster_domain: Some("cluster.local".into()),
        cgroup_root: String::new(),
        cgroups_per_qos: true,
        pod_pids_limit: -1,
        memory_capacity_bytes: 16 << 30,
        cpu_capacity_millis: 4000,
    }
}
