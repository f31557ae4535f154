//! The pod cgroup on the node: created in every cgroup v1 hierarchy with the cgroupfs driver
//! before the runtime places the sandbox there, and removed with the pod. Where it goes is
//! decided in `sergeant_core::spec::pod_cgroup_parent`.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use sergeant_core::spec::{io_reason, is_safe_path_component, SpecError};

use crate::mountinfo::{self, MountEntry};

/// Creates the pod cgroup `path` (and its parents) in every cgroup v1 hierarchy, since the
/// runtime expects a `cgroup_parent` to exist already; with `pids_limit > 0` it also caps
/// the pod's processes there. Creating an existing cgroup succeeds; `""` and `/` do nothing.
/// Blocking I/O: run it off the actor thread.
///
/// # Errors
///
/// [`SpecError::Cgroup`] when the path is relative or climbs out (`..`), the mounts cannot be
/// read, or a directory or `pids.max` cannot be written.
pub fn ensure_pod_cgroup(path: &str, pids_limit: i64) -> Result<(), SpecError> {
    // The runtime makes the unified (v2) copy of the path itself when it places a container.
    for (hierarchy, dir) in hierarchy_dirs(path)?.into_iter().filter(|(h, _)| is_v1(h)) {
        std::fs::create_dir_all(&dir).map_err(|e| {
            SpecError::cgroup(path, format!("{}: {}", dir.display(), io_reason(&e)))
        })?;
        if pids_limit > 0 && has_controller(&hierarchy, "pids") {
            let file = dir.join("pids.max");
            std::fs::write(&file, pids_limit.to_string()).map_err(|e| {
                SpecError::cgroup(path, format!("{}: {}", file.display(), io_reason(&e)))
            })?;
        }
    }
    Ok(())
}

/// Removes the pod cgroup `path` (only its last level: the QoS cgroups stay) from every
/// cgroup hierarchy: the v1 ones and a unified (v2) one, where the runtime created it and
/// leaves it behind when the pod's last container goes. Removing a missing cgroup succeeds.
/// Blocking I/O.
///
/// # Errors
///
/// [`SpecError::Cgroup`] when the path is unusable, or a cgroup still holds processes or
/// cannot be removed for another reason.
pub fn remove_pod_cgroup(path: &str) -> Result<(), SpecError> {
    for (_, dir) in hierarchy_dirs(path)? {
        match std::fs::remove_dir(&dir) {
            Err(e) if e.kind() != ErrorKind::NotFound => {
                return Err(SpecError::cgroup(
                    path,
                    format!("{}: {}", dir.display(), io_reason(&e)),
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// How many processes the pod cgroup `path` holds (`pids.current` of the hierarchy with the
/// pids controller, or of the unified one); `None` when no hierarchy tells. Blocking.
#[must_use]
pub fn pod_processes(path: &str) -> Option<u64> {
    hierarchy_dirs(path)
        .ok()?
        .into_iter()
        .filter(|(h, _)| !is_v1(h) || has_controller(h, "pids"))
        .find_map(|(_, dir)| {
            std::fs::read_to_string(dir.join("pids.current"))
                .ok()?
                .trim()
                .parse()
                .ok()
        })
}

/// The directory of cgroup `path` in each hierarchy; none for the root cgroup.
fn hierarchy_dirs(path: &str) -> Result<Vec<(MountEntry, PathBuf)>, SpecError> {
    let relative = path.trim_start_matches('/');
    if relative.is_empty() {
        return Ok(Vec::new());
    }
    if !path.starts_with('/') || !relative.split('/').all(is_safe_path_component) {
        return Err(SpecError::cgroup(
            path,
            "must be an absolute path without empty, `.` or `..` parts",
        ));
    }
    let hierarchies = cgroup_hierarchies().map_err(|reason| SpecError::cgroup(path, reason))?;
    Ok(hierarchies
        .iter()
        .map(|m| (m.clone(), Path::new(&m.mount_point).join(relative)))
        .collect())
}

/// The node's cgroup hierarchies (v1, and v2 where mounted), read from the mount table once. They are mounted at boot
/// and stay; reading the whole table (hundreds of lines with many pods) for every pod start
/// and stop was a large share of the agent's own work at 110 pods.
fn cgroup_hierarchies() -> Result<&'static [MountEntry], String> {
    static HIERARCHIES: OnceLock<Vec<MountEntry>> = OnceLock::new();
    if let Some(found) = HIERARCHIES.get() {
        return Ok(found);
    }
    let found: Vec<MountEntry> = mountinfo::mounts()?
        .into_iter()
        .filter(|m| m.fs_type == "cgroup" || m.fs_type == "cgroup2")
        .collect();
    Ok(HIERARCHIES.get_or_init(|| found))
}

/// Whether `hierarchy` is a cgroup v1 one (not the unified v2 hierarchy).
fn is_v1(hierarchy: &MountEntry) -> bool {
    hierarchy.fs_type == "cgroup"
}

fn has_controller(hierarchy: &MountEntry, controller: &str) -> bool {
    hierarchy.super_options.split(',').any(|o| o == controller)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_paths_are_refused_and_the_root_is_a_no_op() {
        for bad in ["relative/pod", "/kubepods/../etc", "/kubepods//pod"] {
            assert!(
                matches!(ensure_pod_cgroup(bad, -1), Err(SpecError::Cgroup { .. })),
                "{bad}"
            );
            assert!(remove_pod_cgroup(bad).is_err(), "{bad}");
        }
        assert_eq!(ensure_pod_cgroup("", -1), Ok(()));
        assert_eq!(remove_pod_cgroup("/"), Ok(()));
    }

    /// Real cgroups of this machine (v1, root): created in every hierarchy with a pids cap,
    /// then removed; both twice to show idempotence.
    #[test]
    fn a_pod_cgroup_is_created_limited_and_removed_for_real() {
        let path = format!("/sergeant-unit-test/pod{}", std::process::id());
        ensure_pod_cgroup(&path, 42).expect("create");
        ensure_pod_cgroup(&path, 42).expect("create again");
        let mounts = mountinfo::mounts().expect("mounts");
        let v1: Vec<_> = mounts.iter().filter(|m| m.fs_type == "cgroup").collect();
        for hierarchy in &v1 {
            let dir = hierarchy.mount_point.join(path.trim_start_matches('/'));
            assert!(dir.is_dir(), "{}", dir.display());
            if has_controller(hierarchy, "pids") {
                let max = std::fs::read_to_string(dir.join("pids.max")).expect("pids.max");
                assert_eq!(max.trim(), "42");
            }
        }
        // The runtime's copy in the unified hierarchy, where one is mounted (hybrid mode).
        let unified: Vec<_> = mounts.iter().filter(|m| m.fs_type == "cgroup2").collect();
        for hierarchy in &unified {
            let dir = hierarchy.mount_point.join(path.trim_start_matches('/'));
            std::fs::create_dir_all(&dir).expect("the runtime's v2 cgroup");
        }
        assert_eq!(
            pod_processes(&path),
            Some(0),
            "an empty cgroup holds no process"
        );
        remove_pod_cgroup(&path).expect("remove");
        remove_pod_cgroup(&path).expect("remove again");
        assert_eq!(pod_processes(&path), None);
        for hierarchy in v1.iter().chain(&unified) {
            let dir = hierarchy.mount_point.join(path.trim_start_matches('/'));
            assert!(!dir.exists(), "{} removed", dir.display());
        }
        remove_pod_cgroup("/sergeant-unit-test").expect("remove parent");
        for hierarchy in v1.iter().chain(&unified) {
            assert!(!hierarchy.mount_point.join("sergeant-unit-test").exists());
        }
    }
}
