//! Pods, volumes, node contexts and random strings (a seeded xorshift, so a failure replays)
//! the unit tests of `spec`, `volumes` and the host crate build
//! on (compiled for tests and with the `testing` feature).

use std::path::PathBuf;

use k8s_openapi::api::core::v1::{
    Container, EmptyDirVolumeSource, HostPathVolumeSource, Pod, PodSpec, ResourceRequirements,
    Volume,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::context::NodeContext;

/// A pod `ns/web` with UID `uid-1` and the given containers.
pub fn pod_with(containers: Vec<Container>, init: Vec<Container>) -> Pod {
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
pub fn resources(name: &str, requests: &[(&str, &str)], limits: &[(&str, &str)]) -> Container {
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

/// `pod` with pod-level `spec.resources` of the given requests and limits.
pub fn with_pod_resources(mut pod: Pod, requests: &[(&str, &str)], limits: &[(&str, &str)]) -> Pod {
    let Some(resources) = resources("", requests, limits).resources else {
        return pod;
    };
    if let Some(spec) = pod.spec.as_mut() {
        spec.resources = Some(resources);
    }
    pod
}

/// A node rooted at `root` with cluster DNS 10.96.0.10 and domain `cluster.local`.
pub fn node(root: PathBuf) -> NodeContext {
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
        cpus: 4,
        os: crate::context::NodeOs::Linux,
        seccomp_default: false,
        apparmor_enabled: false,
    }
}

/// An emptyDir volume `name`, with a `medium` and a `sizeLimit` when given.
#[must_use]
pub fn empty_dir(name: &str, medium: Option<&str>, size: Option<&str>) -> Volume {
    Volume {
        name: name.into(),
        empty_dir: Some(EmptyDirVolumeSource {
            medium: medium.map(Into::into),
            size_limit: size.map(|s| ApiQuantity(s.into())),
        }),
        ..Default::default()
    }
}

/// A hostPath volume `name` at `path`, of type `kind` when given.
#[must_use]
pub fn host_path(name: &str, path: &str, kind: Option<&str>) -> Volume {
    Volume {
        name: name.into(),
        host_path: Some(HostPathVolumeSource {
            path: path.into(),
            type_: kind.map(Into::into),
        }),
        ..Default::default()
    }
}

/// `count` strings of up to `max_parts - 1` parts picked from `alphabet`, from `seed`.
pub fn random_strings<'a>(
    alphabet: &'a [&'a str],
    max_parts: u64,
    count: usize,
    seed: u64,
) -> impl Iterator<Item = String> + 'a {
    let mut state = seed | 1;
    (0..count).map(move |_| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let mut bits = state;
        let parts = state % max_parts;
        (0..parts)
            .map(|_| {
                bits = bits.rotate_right(5) ^ 0x9e37_79b9_7f4a_7c15;
                let pick = usize::try_from(bits % alphabet.len() as u64).unwrap_or(0);
                alphabet[pick]
            })
            .collect()
    })
}

/// A container `name` of `sandbox` with runtime id `id`, as the runtime lists it.
#[must_use]
pub fn listed_container(id: &str, sandbox: &str, name: &str) -> k8s_cri::v1::Container {
    k8s_cri::v1::Container {
        id: id.to_string(),
        pod_sandbox_id: sandbox.to_string(),
        metadata: Some(k8s_cri::v1::ContainerMetadata {
            name: name.to_string(),
            attempt: 0,
        }),
        ..Default::default()
    }
}
