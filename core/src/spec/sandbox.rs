//! The CRI sandbox configuration of a pod: identity, hostname, logs, DNS, host ports, labels
//! and the pod-level Linux settings (cgroup, namespaces, users, sysctls, the sandbox's seccomp
//! profile and SELinux labels).

use std::collections::HashMap;

use k8s_cri::v1::{
    security_profile::ProfileType, Int64Value, LinuxPodSandboxConfig, LinuxSandboxSecurityContext,
    NamespaceMode, NamespaceOption, PodSandboxConfig, PodSandboxMetadata, PortMapping, Protocol,
};
use k8s_openapi::api::core::v1::{Pod, PodSpec};

use super::cgroup::pod_cgroup_parent;
use super::dns::dns_config;
use super::hosts::pod_hostname;
use super::logs::pod_log_dir;
use super::profiles::{of_type, selinux};
use super::security::supplemental_groups_policy;
use super::windows::sandbox_windows;
use crate::context::{all_containers, NodeContext, NodeOs, PodIdentity, SpecError};
use crate::labels;

/// The sandbox configuration of `pod` for its `attempt`-th sandbox (0 for the first). Reads
/// the node's resolv.conf when the DNS policy needs it: blocking I/O, run it through
/// [`crate::pod::file_work`].
///
/// # Errors
///
/// [`SpecError::Field`] for a pod without name or usable UID, a `spec.hostname` that is not
/// a DNS label, an unknown DNS policy, port protocol or `supplementalGroupsPolicy`, a host
/// port out of range, or (on a Windows node) HostProcess settings the pod may not have;
/// [`SpecError::Host`] when the node's resolv.conf is needed and cannot be read.
pub fn sandbox_config(
    pod: &Pod,
    node: &NodeContext,
    attempt: u32,
    host_resolv_conf: Option<&str>,
) -> Result<PodSandboxConfig, SpecError> {
    let id = PodIdentity::of(pod)?;
    let empty = PodSpec::default();
    let spec = pod.spec.as_ref().unwrap_or(&empty);
    // Upstream's Windows kubelet sends the Linux half too (the runtime reads what the Windows
    // half lacks from it), without a cgroup: Windows has none.
    let (cgroup_parent, windows) = match node.os {
        NodeOs::Linux => (pod_cgroup_parent(pod, node), None),
        NodeOs::Windows => (String::new(), Some(sandbox_windows(&id.display, spec)?)),
    };
    Ok(PodSandboxConfig {
        metadata: Some(PodSandboxMetadata {
            name: id.name.clone(),
            uid: id.uid.clone(),
            namespace: id.namespace.clone(),
            attempt,
        }),
        // A host-network pod shares the node's UTS namespace: it keeps the node's hostname,
        // and a runtime asked to set one there refuses the sandbox.
        hostname: if spec.host_network == Some(true) {
            String::new()
        } else {
            pod_hostname(spec, &id)?
        },
        log_directory: pod_log_dir(&id, node).display().to_string(),
        dns_config: Some(dns_config(pod, &id, node, host_resolv_conf)?),
        port_mappings: port_mappings(pod, &id)?,
        labels: sandbox_labels(pod, &id, node),
        annotations: pod
            .metadata
            .annotations
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        linux: Some(LinuxPodSandboxConfig {
            cgroup_parent,
            security_context: Some(security_context(pod, &id, spec, node.os)?),
            sysctls: spec
                .security_context
                .as_ref()
                .and_then(|sc| sc.sysctls.as_ref())
                .into_iter()
                .flatten()
                .map(|s| (s.name.clone(), s.value.clone()))
                .collect(),
            overhead: None,
            resources: None,
        }),
        windows,
    })
}

/// The identity labels every runtime object of the pod carries, so the agent finds them again.
pub fn identity_labels(id: &PodIdentity, node: &NodeContext) -> HashMap<String, String> {
    HashMap::from([
        (labels::POD_NAME.to_string(), id.name.clone()),
        (labels::POD_NAMESPACE.to_string(), id.namespace.clone()),
        (labels::POD_UID.to_string(), id.uid.clone()),
        (labels::NODE.to_string(), node.node_name.clone()),
    ])
}

/// The pod's own labels, with sergeant's identity labels over them.
fn sandbox_labels(pod: &Pod, id: &PodIdentity, node: &NodeContext) -> HashMap<String, String> {
    let mut all: HashMap<String, String> = pod
        .metadata
        .labels
        .iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    all.extend(identity_labels(id, node));
    all
}

/// One mapping per container port that asks for a host port (regular containers).
fn port_mappings(pod: &Pod, id: &PodIdentity) -> Result<Vec<PortMapping>, SpecError> {
    let mut mappings = Vec::new();
    for (field, container) in all_containers(pod).filter(|(f, _)| f.starts_with("spec.containers"))
    {
        for (index, port) in container.ports.iter().flatten().enumerate() {
            let Some(host_port) = port.host_port.filter(|p| *p != 0) else {
                continue;
            };
            let at = |name: &str| format!("{field}.ports[{index}].{name}");
            if !(1..=65535).contains(&host_port) {
                return Err(SpecError::field(
                    &id.display,
                    at("hostPort"),
                    format!("{host_port} is not a port number"),
                ));
            }
            let protocol = match port.protocol.as_deref().unwrap_or("TCP") {
                "TCP" => Protocol::Tcp,
                "UDP" => Protocol::Udp,
                "SCTP" => Protocol::Sctp,
                other => {
                    return Err(SpecError::field(
                        &id.display,
                        at("protocol"),
                        format!("unknown protocol {other:?} (use TCP, UDP or SCTP)"),
                    ))
                }
            };
            mappings.push(PortMapping {
                protocol: protocol as i32,
                container_port: port.container_port,
                host_port,
                host_ip: port.host_ip.clone().unwrap_or_default(),
            });
        }
    }
    Ok(mappings)
}

/// Which namespaces the pod's containers share with the node or with each other: the node's
/// for `hostNetwork`/`hostPID`/`hostIPC`, else the pod's, and a process namespace per
/// container unless `shareProcessNamespace`.
pub fn namespace_options(spec: &PodSpec) -> NamespaceOption {
    let host = |flag: Option<bool>| flag.unwrap_or(false);
    let mode = |on_host: bool, fallback: NamespaceMode| {
        (if on_host {
            NamespaceMode::Node
        } else {
            fallback
        }) as i32
    };
    let pid = if host(spec.share_process_namespace) {
        NamespaceMode::Pod
    } else {
        NamespaceMode::Container
    };
    NamespaceOption {
        network: mode(host(spec.host_network), NamespaceMode::Pod),
        pid: mode(host(spec.host_pid), pid),
        ipc: mode(host(spec.host_ipc), NamespaceMode::Pod),
        ..Default::default()
    }
}

/// Namespaces, users and groups of the sandbox. It is privileged when any container is,
/// since the runtime allows privileged containers only in such a sandbox. Its own process (the
/// pause process) always runs under the runtime's default seccomp profile, as upstream's, so a
/// pod's profile never has to allow what the sandbox does; it carries the pod's SELinux labels
/// on Linux.
fn security_context(
    pod: &Pod,
    id: &PodIdentity,
    spec: &PodSpec,
    os: NodeOs,
) -> Result<LinuxSandboxSecurityContext, SpecError> {
    let pod_sc = spec.security_context.as_ref();
    let selinux_options = match os {
        NodeOs::Linux => selinux(pod_sc.and_then(|sc| sc.se_linux_options.as_ref())),
        NodeOs::Windows => None,
    };
    Ok(LinuxSandboxSecurityContext {
        seccomp: Some(of_type(ProfileType::RuntimeDefault)),
        selinux_options,
        namespace_options: Some(namespace_options(spec)),
        run_as_user: pod_sc
            .and_then(|sc| sc.run_as_user)
            .map(|value| Int64Value { value }),
        run_as_group: pod_sc
            .and_then(|sc| sc.run_as_group)
            .map(|value| Int64Value { value }),
        supplemental_groups: super::security::supplemental_groups(pod_sc),
        supplemental_groups_policy: supplemental_groups_policy(&id.display, pod_sc)?,
        privileged: all_containers(pod)
            .any(|(_, c)| c.security_context.as_ref().and_then(|sc| sc.privileged) == Some(true)),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{node, pod_with, resources};
    use k8s_openapi::api::core::v1::{
        ContainerPort, PodSecurityContext, SELinuxOptions, SecurityContext, Sysctl,
    };

    fn build(pod: &Pod) -> Result<PodSandboxConfig, SpecError> {
        let dir = tempfile::tempdir().unwrap();
        let node = node(dir.path().to_path_buf());
        sandbox_config(pod, &node, 2, Some("nameserver 192.0.2.53\n"))
    }

    fn web_pod() -> Pod {
        let mut web = resources("web", &[("cpu", "100m")], &[]);
        web.ports = Some(vec![
            ContainerPort {
                container_port: 80,
                host_port: Some(8080),
                protocol: Some("UDP".into()),
                host_ip: Some("127.0.0.1".into()),
                ..Default::default()
            },
            ContainerPort {
                container_port: 443,
                ..Default::default()
            },
        ]);
        let mut pod = pod_with(vec![web], vec![]);
        pod.metadata.labels = Some(
            [
                ("app".to_string(), "web".to_string()),
                (labels::POD_NAME.to_string(), "spoof".to_string()),
            ]
            .into(),
        );
        pod.metadata.annotations = Some([("note".to_string(), "hi".to_string())].into());
        pod
    }

    #[test]
    fn identity_logs_labels_and_ports() {
        let config = build(&web_pod()).unwrap();
        let meta = config.metadata.as_ref().unwrap();
        assert_eq!(
            (
                meta.name.as_str(),
                meta.namespace.as_str(),
                meta.uid.as_str(),
                meta.attempt
            ),
            ("web", "ns", "uid-1", 2)
        );
        assert_eq!(config.hostname, "web");
        assert!(
            config.log_directory.ends_with("/logs/ns_web_uid-1"),
            "{}",
            config.log_directory
        );
        assert_eq!(config.labels["app"], "web");
        assert_eq!(config.labels[labels::POD_NAME], "web");
        assert_eq!(config.labels[labels::POD_UID], "uid-1");
        assert_eq!(config.labels[labels::NODE], "node-a");
        assert_eq!(config.annotations["note"], "hi");
        assert_eq!(
            config.port_mappings,
            vec![PortMapping {
                protocol: Protocol::Udp as i32,
                container_port: 80,
                host_port: 8080,
                host_ip: "127.0.0.1".into()
            }]
        );
        let linux = config.linux.unwrap();
        assert_eq!(linux.cgroup_parent, "/kubepods/burstable/poduid-1");
        let ns = linux.security_context.unwrap().namespace_options.unwrap();
        assert_eq!(
            (ns.network, ns.pid, ns.ipc),
            (
                NamespaceMode::Pod as i32,
                NamespaceMode::Container as i32,
                NamespaceMode::Pod as i32
            )
        );
        assert_eq!(config.dns_config.unwrap().servers, vec!["10.96.0.10"]);
    }

    #[test]
    fn host_namespaces_users_sysctls_and_privilege() {
        let mut pod = web_pod();
        let spec = pod.spec.as_mut().unwrap();
        spec.host_network = Some(true);
        spec.host_pid = Some(true);
        spec.host_ipc = Some(true);
        spec.hostname = Some("custom".into());
        spec.security_context = Some(PodSecurityContext {
            run_as_user: Some(1000),
            run_as_group: Some(2000),
            supplemental_groups: Some(vec![3000]),
            fs_group: Some(4000),
            sysctls: Some(vec![Sysctl {
                name: "net.core.somaxconn".into(),
                value: "1024".into(),
            }]),
            se_linux_options: Some(SELinuxOptions {
                level: Some("s0:c5".into()),
                ..Default::default()
            }),
            supplemental_groups_policy: Some("Strict".into()),
            ..Default::default()
        });
        spec.containers[0].security_context = Some(SecurityContext {
            privileged: Some(true),
            ..Default::default()
        });
        let config = build(&pod).unwrap();
        assert_eq!(config.hostname, "", "the node's hostname stays");
        let linux = config.linux.unwrap();
        assert_eq!(linux.sysctls["net.core.somaxconn"], "1024");
        let sc = linux.security_context.unwrap();
        assert!(sc.privileged);
        assert_eq!(sc.run_as_user, Some(Int64Value { value: 1000 }));
        assert_eq!(sc.run_as_group, Some(Int64Value { value: 2000 }));
        assert_eq!(sc.supplemental_groups, vec![4000, 3000], "fsGroup first");
        assert_eq!(
            sc.seccomp.map(|p| p.profile_type),
            Some(ProfileType::RuntimeDefault as i32),
            "the sandbox always runs under the runtime's default profile"
        );
        assert_eq!(sc.selinux_options.unwrap().level, "s0:c5");
        assert_eq!(
            sc.supplemental_groups_policy,
            k8s_cri::v1::SupplementalGroupsPolicy::Strict as i32
        );
        let ns = sc.namespace_options.unwrap();
        assert_eq!(
            (ns.network, ns.pid, ns.ipc),
            (
                NamespaceMode::Node as i32,
                NamespaceMode::Node as i32,
                NamespaceMode::Node as i32
            )
        );
        // The host network means the host resolver for ClusterFirst.
        assert_eq!(config.dns_config.unwrap().servers, vec!["192.0.2.53"]);
    }

    #[test]
    fn a_bad_protocol_names_the_port() {
        let mut pod = web_pod();
        pod.spec.as_mut().unwrap().containers[0]
            .ports
            .as_mut()
            .unwrap()[0]
            .protocol = Some("ICMP".into());
        let error = build(&pod).unwrap_err().to_string();
        assert!(
            error.contains("spec.containers[0].ports[0].protocol"),
            "{error}"
        );
    }
}
