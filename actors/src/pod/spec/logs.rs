//! Where the runtime writes a pod's container logs (`/var/log/pods/<ns>_<name>_<uid>/<container>/`)
//! and creating those directories, which the runtime expects to exist.

use std::path::PathBuf;

use sergeant_messages::pods::core::Pod;

use super::error::SpecError;
use super::identity::{is_safe_path_component, PodIdentity};
use super::node::NodeContext;

/// The pod's log directory, the sandbox's `log_directory`.
pub(crate) fn pod_log_dir(id: &PodIdentity, node: &NodeContext) -> PathBuf {
    node.pod_log_root
        .join(format!("{}_{}_{}", id.namespace, id.name, id.uid))
}

/// Creates `<pod log dir>/<container_name>/`, where the runtime writes the container's
/// `<restart_count>.log`, and returns it. Run it before creating the container. Blocking I/O.
///
/// # Errors
///
/// [`SpecError::Field`] for a pod without name or usable UID or a container name unusable as a
/// directory; [`SpecError::Host`] when the directory cannot be created.
pub fn prepare_container_log_dir(
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
    let dir = pod_log_dir(&id, node).join(container_name);
    std::fs::create_dir_all(&dir).map_err(|e| SpecError::host(&id.display, &dir, &e))?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pod::spec::test_pods::{node, pod_with};

    #[test]
    fn the_container_log_dir_is_created_under_the_pod_log_dir() {
        let root = tempfile::tempdir().unwrap();
        let node = node(root.path().to_path_buf());
        let pod = pod_with(vec![], vec![]);
        let dir = prepare_container_log_dir(&pod, "app", &node).unwrap();
        assert_eq!(dir, root.path().join("logs/ns_web_uid-1/app"));
        assert!(dir.is_dir());
        prepare_container_log_dir(&pod, "app", &node).unwrap();
        assert!(prepare_container_log_dir(&pod, "../x", &node).is_err());
    }
}
