//! The pod cgroup on the node: created in every cgroup v1 hierarchy with the cgroupfs driver
//! before the runtime places the sandbox there, and removed with the pod. Where it goes is
//! decided in `sergeant_core::spec::pod_cgroup_parent`.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use sergeant_core::spec::{io_reason, is_safe_path_component, PodCgroupResources, SpecError};

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

/// Sets the cpu and memory limits of the pod cgroup `path` in the cgroup v1 `cpu` and
/// `memory` hierarchies (`cpu.shares`, `cpu.cfs_period_us`, `cpu.cfs_quota_us`,
/// `memory.limit_in_bytes`; an absent limit is written as unlimited, `-1`). The cgroup must
/// exist ([`ensure_pod_cgroup`]). The kernel refuses a cpu quota below a child cgroup's and a
/// memory limit below what the pod uses: a caller that lowers limits lowers the containers'
/// first. `""` and `/` do nothing. Blocking I/O.
///
/// # Errors
///
/// [`SpecError::Cgroup`] naming the file and the kernel's reason when a write fails.
pub fn set_pod_cgroup_resources(
    path: &str,
    resources: &PodCgroupResources,
) -> Result<(), SpecError> {
    let unlimited = |value: Option<i64>| value.unwrap_or(-1).to_string();
    for (hierarchy, dir) in hierarchy_dirs(path)?.into_iter().filter(|(h, _)| is_v1(h)) {
        let mut files = Vec::new();
        if has_controller(&hierarchy, "cpu") {
            files.push(("cpu.shares", resources.cpu_shares.to_string()));
            if resources.cpu_quota_us.is_some() {
                let period = PodCgroupResources::CPU_PERIOD_US.to_string();
                files.push(("cpu.cfs_period_us", period));
            }
            files.push(("cpu.cfs_quota_us", unlimited(resources.cpu_quota_us)));
        }
        if has_controller(&hierarchy, "memory") {
            files.push((
                "memory.limit_in_bytes",
                unlimited(resources.memory_limit_bytes),
            ));
        }
        for (name, value) in files {
            let file = dir.join(name);
            std::fs::write(&file, &value).map_err(|e| {
                SpecError::cgroup(
                    path,
                    format!("{}: writing {value}: {}", file.display(), io_reason(&e)),
                )
            })?;
        }
    }
    Ok(())
}

/// The cpu and memory limits the pod cgroup `path` holds now, read from the cgroup v1 `cpu`
/// and `memory` hierarchies; `None` when there is no such cgroup (not made yet, or gone), or
/// no v1 `cpu` hierarchy to read. A memory limit past 2^62 bytes is the kernel's "unlimited".
/// Blocking I/O (a few small files).
///
/// # Errors
///
/// [`SpecError::Cgroup`] when a file cannot be read or holds no number.
pub fn read_pod_cgroup_resources(path: &str) -> Result<Option<PodCgroupResources>, SpecError> {
    const UNLIMITED_MEMORY: i64 = 1 << 62;
    let dirs = hierarchy_dirs(path)?;
    let dir_of = |controller: &str| {
        dirs.iter()
            .find(|(h, _)| is_v1(h) && has_controller(h, controller))
            .map(|(_, dir)| dir.clone())
    };
    let (Some(cpu), memory) = (dir_of("cpu"), dir_of("memory")) else {
        return Ok(None);
    };
    if !cpu.is_dir() {
        return Ok(None);
    }
    let read = |dir: &Path, name: &str| -> Result<i64, SpecError> {
        let file = dir.join(name);
        let text = std::fs::read_to_string(&file).map_err(|e| {
            SpecError::cgroup(path, format!("{}: {}", file.display(), io_reason(&e)))
        })?;
        text.trim().parse().map_err(|_| {
            SpecError::cgroup(
                path,
                format!("{}: {:?} is not a number", file.display(), text.trim()),
            )
        })
    };
    let quota = read(&cpu, "cpu.cfs_quota_us")?;
    let period = read(&cpu, "cpu.cfs_period_us")?;
    let memory_limit = match memory.filter(|dir| dir.is_dir()) {
        Some(dir) => Some(read(&dir, "memory.limit_in_bytes")?).filter(|b| *b < UNLIMITED_MEMORY),
        None => None,
    };
    Ok(Some(PodCgroupResources {
        cpu_shares: read(&cpu, "cpu.shares")?,
        cpu_quota_us: (quota > 0 && period > 0)
            .then(|| quota.saturating_mul(PodCgroupResources::CPU_PERIOD_US) / period),
        memory_limit_bytes: memory_limit,
    }))
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
        let limits = PodCgroupResources {
            cpu_shares: 204,
            cpu_quota_us: Some(40_000),
            memory_limit_bytes: Some(64 << 20),
        };
        set_pod_cgroup_resources(&path, &limits).expect("limits");
        assert_eq!(
            read_pod_cgroup_resources(&path).expect("read"),
            Some(limits)
        );
        let read = |controller: &str, file: &str| {
            let hierarchy = v1
                .iter()
                .find(|h| has_controller(h, controller))
                .expect("a v1 hierarchy of the controller");
            let dir = hierarchy.mount_point.join(path.trim_start_matches('/'));
            std::fs::read_to_string(dir.join(file))
                .expect(file)
                .trim()
                .to_owned()
        };
        assert_eq!(read("cpu", "cpu.shares"), "204");
        assert_eq!(read("cpu", "cpu.cfs_period_us"), "100000");
        assert_eq!(read("cpu", "cpu.cfs_quota_us"), "40000");
        assert_eq!(
            read("memory", "memory.limit_in_bytes"),
            (64 << 20).to_string()
        );
        let unlimited = PodCgroupResources {
            cpu_shares: 2,
            cpu_quota_us: None,
            memory_limit_bytes: None,
        };
        set_pod_cgroup_resources(&path, &unlimited).expect("unlimited");
        assert_eq!(read("cpu", "cpu.cfs_quota_us"), "-1");
        assert_eq!(
            read_pod_cgroup_resources(&path).expect("read"),
            Some(unlimited)
        );
        assert_ne!(
            read("memory", "memory.limit_in_bytes"),
            (64 << 20).to_string()
        );
        remove_pod_cgroup(&path).expect("remove");
        remove_pod_cgroup(&path).expect("remove again");
        assert_eq!(pod_processes(&path), None);
        assert_eq!(read_pod_cgroup_resources(&path).expect("read"), None);
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
