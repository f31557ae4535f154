//! Where the runtime writes a pod's container logs (`/var/log/pods/<ns>_<name>_<uid>/<container>/`).

use std::path::PathBuf;

use k8s_openapi::api::core::v1::Pod;

use crate::context::{is_safe_path_component, NodeContext, PodIdentity, SpecError};

/// The pod's log directory, the sandbox's `log_directory`.
pub fn pod_log_dir(id: &PodIdentity, node: &NodeContext) -> PathBuf {
    node.pod_log_root
        .join(format!("{}_{}_{}", id.namespace, id.name, id.uid))
}

/// `<pod log dir>/<container_name>/`, where the runtime writes the container's
/// `<restart_count>.log` (`sergeant_host::pod_files::prepare_container_log_dir` makes it).
///
/// # Errors
///
/// [`SpecError::Field`] for a pod without name or usable UID or a container name unusable as a
/// directory.
pub fn container_log_dir(
    pod: &Pod,
    container_name: &str,
    node: &NodeContext,
) -> Result<PathBuf, SpecError> {
    let id = PodIdentity::of(pod)?;
    if !is_safe_path_component(container_name) {
        return Err(SpecError::field(
            &id.display,
            format!("container {container_name:?}"),
            "the name is not usable as a directory name",
        ));
    }
    Ok(pod_log_dir(&id, node).join(container_name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{node, pod_with};

    #[test]
    fn the_container_log_dir_is_under_the_pod_log_dir() {
        let node = node(PathBuf::from("/r"));
        let pod = pod_with(vec![], vec![]);
        let dir = container_log_dir(&pod, "app", &node).unwrap();
        assert_eq!(dir, PathBuf::from("/r/logs/ns_web_uid-1/app"));
        assert!(container_log_dir(&pod, "../x", &node).is_err());
    }
}
