//! An ephemeral container's `targetContainerName`: the container it debugs. It joins that
//! container's process namespace (CRI `NamespaceMode::Target`), so it sees the target's
//! processes even where the pod's containers share none, as upstream's kubelet sets it up.

use k8s_cri::v1::{ContainerConfig, NamespaceMode};

/// Puts the container `config` describes into the process namespace of the container
/// `target_id` (a runtime ID). The other namespaces stay as the pod has them. A Windows
/// configuration has no namespaces to share: it is left as it is.
pub fn join_target_pid_namespace(config: &mut ContainerConfig, target_id: &str) {
    let linux = config.linux.as_mut();
    let Some(security) = linux.and_then(|l| l.security_context.as_mut()) else {
        return;
    };
    let namespaces = security
        .namespace_options
        .get_or_insert_with(Default::default);
    namespaces.pid = NamespaceMode::Target as i32;
    namespaces.target_id = target_id.to_owned();
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_cri::v1::{LinuxContainerConfig, LinuxContainerSecurityContext, NamespaceOption};

    #[test]
    fn the_process_namespace_becomes_the_targets_and_the_others_stay() {
        let pod_namespaces = NamespaceOption {
            network: NamespaceMode::Pod as i32,
            pid: NamespaceMode::Container as i32,
            ipc: NamespaceMode::Pod as i32,
            ..Default::default()
        };
        let mut config = ContainerConfig {
            linux: Some(LinuxContainerConfig {
                security_context: Some(LinuxContainerSecurityContext {
                    namespace_options: Some(pod_namespaces.clone()),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        join_target_pid_namespace(&mut config, "abc123");
        let linux = config.linux.unwrap().security_context.unwrap();
        assert_eq!(
            linux.namespace_options,
            Some(NamespaceOption {
                pid: NamespaceMode::Target as i32,
                target_id: "abc123".into(),
                ..pod_namespaces
            })
        );
        let mut windows = ContainerConfig::default();
        join_target_pid_namespace(&mut windows, "abc123");
        assert_eq!(windows, ContainerConfig::default());
    }
}
