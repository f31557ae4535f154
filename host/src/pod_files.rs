//! The small files a pod's containers need on the node before they are created: the managed
//! hosts file, the container log directory and the termination-message file. What they are
//! and where they go is decided in `sergeant_core::spec`; this writes them. Blocking I/O, in
//! places sergeant owns (the pod actor runs it on its own thread, see its `file_work`).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::file_mode::{create_file_with_mode, set_mode};

use k8s_openapi::api::core::v1::{Container, Pod};
use sergeant_core::spec::{
    container_log_dir, hosts_file, termination_log_file, NodeContext, PodIdentity, SpecError,
    HOSTS_FILE,
};

/// The node's own hosts file, which a host-network pod's managed file copies.
const NODE_HOSTS: &str = "/etc/hosts";

/// Writes the pod's managed hosts file for the sandbox addresses `pod_ips` (primary first) and
/// returns its path; `None` when the pod gets none. The file is replaced atomically and only
/// when its content changes, so a container never sees it half written.
///
/// # Errors
///
/// What [`hosts_file`] refuses; [`SpecError::Host`] when the node's `/etc/hosts` (host network)
/// cannot be read or the file cannot be written.
pub fn prepare_hosts_file(
    pod: &Pod,
    pod_ips: &[String],
    node: &NodeContext,
) -> Result<Option<PathBuf>, SpecError> {
    let id = PodIdentity::of(pod)?;
    let host_network = pod.spec.as_ref().and_then(|s| s.host_network) == Some(true);
    let node_hosts = if host_network {
        let path = Path::new(NODE_HOSTS);
        Some(std::fs::read_to_string(path).map_err(|e| SpecError::host(&id.display, path, &e))?)
    } else {
        None
    };
    let Some((path, content)) = hosts_file(pod, pod_ips, node, node_hosts.as_deref())? else {
        return Ok(None);
    };
    if std::fs::read_to_string(&path).is_ok_and(|old| old == content) {
        return Ok(Some(path));
    }
    replace(&path, &content).map_err(|e| SpecError::host(&id.display, &path, &e))?;
    tracing::debug!(pod = %id.display, path = %path.display(), "hosts file written");
    Ok(Some(path))
}

/// Writes `content` next to `path` and renames it over `path`, readable by every user of the
/// container (0644) whatever the umask.
fn replace(path: &Path, content: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let temporary = dir.join(format!(".{HOSTS_FILE}.tmp"));
    let mut file = create_file_with_mode(
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true),
        0o644,
    )
    .open(&temporary)?;
    file.write_all(content.as_bytes())?;
    set_mode(&temporary, 0o644)?;
    // No fsync: the rename keeps readers from a partial file, and after a crash the file is
    // compared and written again on the pod's next sync. A flush per container start costs
    // tens of milliseconds on a busy disk.
    std::fs::rename(&temporary, path)
}

/// Creates `<pod log dir>/<container_name>/`, where the runtime writes the container's
/// `<restart_count>.log` and which it expects to exist, and returns it.
///
/// # Errors
///
/// What [`container_log_dir`] refuses; [`SpecError::Host`] when the directory cannot be
/// created.
pub fn prepare_container_log_dir(
    pod: &Pod,
    container_name: &str,
    node: &NodeContext,
) -> Result<PathBuf, SpecError> {
    let dir = container_log_dir(pod, container_name, node)?;
    std::fs::create_dir_all(&dir).map_err(|e| SpecError::host(&display(pod), &dir, &e))?;
    Ok(dir)
}

/// The mode of a termination-message file: read and write for every user.
const TERMINATION_LOG_MODE: u32 = 0o666;

/// Creates the empty host file the container's termination message goes to (emptying a
/// leftover from an earlier try of the same restart) and returns its path; `None` when the
/// container has no termination message path.
///
/// # Errors
///
/// What [`termination_log_file`] refuses; [`SpecError::Host`] when the file or its directory
/// cannot be created.
pub fn prepare_termination_log(
    pod: &Pod,
    container: &Container,
    restart_count: u32,
    node: &NodeContext,
) -> Result<Option<PathBuf>, SpecError> {
    let Some(path) = termination_log_file(pod, container, restart_count, node)? else {
        return Ok(None);
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| SpecError::host(&display(pod), dir, &e))?;
    }
    std::fs::write(&path, b"").map_err(|e| SpecError::host(&display(pod), &path, &e))?;
    // Writable by any user, as upstream makes it: a container running as a non-root user
    // writes its termination message there (the umask would leave it 0644).
    set_mode(&path, TERMINATION_LOG_MODE).map_err(|e| SpecError::host(&display(pod), &path, &e))?;
    Ok(Some(path))
}

/// `namespace/name` of the pod, for errors.
fn display(pod: &Pod) -> String {
    PodIdentity::of(pod).map_or_else(|_| "<unnamed pod>".to_owned(), |id| id.display)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{HostAlias, PodOS};
    use sergeant_core::testing::{node, pod_with};
    use std::os::unix::fs::PermissionsExt;

    fn alias(ip: &str, names: &[&str]) -> HostAlias {
        HostAlias {
            ip: ip.into(),
            hostnames: Some(names.iter().map(|n| (*n).to_owned()).collect()),
        }
    }

    #[test]
    fn the_file_is_written_for_pods_with_an_ip_or_the_host_network_on_linux() {
        let root = tempfile::tempdir().unwrap();
        let node = node(root.path().to_path_buf());
        let mut pod = pod_with(vec![], vec![]);
        let spec = pod.spec.as_mut().unwrap();
        spec.hostname = Some("h".into());
        spec.host_aliases = Some(vec![alias("10.1.2.3", &["db"])]);
        assert_eq!(prepare_hosts_file(&pod, &[], &node).unwrap(), None);
        let path = prepare_hosts_file(&pod, &["10.88.0.5".into()], &node)
            .unwrap()
            .unwrap();
        assert_eq!(path, root.path().join("pods/uid-1/etc-hosts"));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("10.88.0.5\th\n"), "{text}");
        assert!(text.ends_with("10.1.2.3\tdb\n"), "{text}");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644);
        // A changed file is put back; a Windows pod gets none.
        std::fs::write(&path, "edited").unwrap();
        prepare_hosts_file(&pod, &["10.88.0.5".into()], &node).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        pod.spec.as_mut().unwrap().os = Some(PodOS {
            name: "windows".into(),
        });
        assert_eq!(
            prepare_hosts_file(&pod, &["10.88.0.5".into()], &node).unwrap(),
            None
        );
        pod.spec.as_mut().unwrap().os = None;
        pod.spec.as_mut().unwrap().host_network = Some(true);
        let text = std::fs::read_to_string(prepare_hosts_file(&pod, &[], &node).unwrap().unwrap())
            .unwrap();
        assert!(
            text.starts_with("# Kubernetes-managed hosts file (host network).\n"),
            "{text}"
        );
        assert!(text.contains(&std::fs::read_to_string(NODE_HOSTS).unwrap()));
    }

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

    #[test]
    fn the_termination_log_file_is_prepared_empty() {
        let root = tempfile::tempdir().unwrap();
        let node = node(root.path().to_path_buf());
        let pod = pod_with(vec![], vec![]);
        let container = Container {
            name: "c".into(),
            ..Default::default()
        };
        let path = prepare_termination_log(&pod, &container, 3, &node)
            .unwrap()
            .unwrap();
        assert_eq!(path, root.path().join("pods/uid-1/containers/c/3"));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666, "any container user may write it");
        std::fs::write(&path, "old").unwrap();
        prepare_termination_log(&pod, &container, 3, &node).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
        let none = Container {
            termination_message_path: Some(String::new()),
            ..container.clone()
        };
        assert_eq!(
            prepare_termination_log(&pod, &none, 0, &node).unwrap(),
            None
        );
        let bad = Container {
            name: "..".into(),
            ..container
        };
        assert!(prepare_termination_log(&pod, &bad, 0, &node).is_err());
    }
}
