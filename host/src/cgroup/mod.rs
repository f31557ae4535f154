//! The node's cgroups: a pod's cgroup made before the runtime places the sandbox there,
//! limited, read back and removed with the pod, and the node-level cgroups above the pods
//! (`kubepods` and its QoS children) kept at what `sergeant_core::spec::qos_cgroups` decides.
//! Works on cgroup v1 hierarchies and on a unified (v2) one with the cgroupfs driver: the
//! hierarchies are detected from the mount table ([`fs`]), each limit goes to its version's
//! file ([`files`]). The memory of `kubepods` is read back for `allocatableMemory.available`
//! ([`memory`]). Where a pod's cgroup goes is `sergeant_core::spec::pod_cgroup_parent`.
//! Every function here is blocking file work: run it off the actor thread.

mod files;
mod fs;
mod ops;
#[cfg(test)]
mod unified_tests;

use std::sync::OnceLock;

use sergeant_core::spec::{NodeCgroup, PodCgroupResources, SpecError};

use crate::mountinfo;
use files::Setting;
use fs::Cgroupfs;

/// Creates the pod cgroup `path` (and its parents), since the runtime expects a
/// `cgroup_parent` to exist already; with `pids_limit > 0` it also caps the pod's processes
/// there. Creating an existing cgroup succeeds; `""` and `/` do nothing.
///
/// # Errors
///
/// [`SpecError::Cgroup`] when the path is relative or climbs out (`..`), the mounts cannot be
/// read, or a directory or `pids.max` cannot be written.
pub fn ensure_pod_cgroup(path: &str, pids_limit: i64) -> Result<(), SpecError> {
    let cgroups = node(path)?;
    cgroups.ensure(path)?;
    if pids_limit > 0 {
        cgroups.set(path, &[Setting::PidsMax(Some(pids_limit))])?;
    }
    Ok(())
}

/// Sets the cpu and memory limits of the pod cgroup `path` (v1: `cpu.shares`,
/// `cpu.cfs_period_us`, `cpu.cfs_quota_us`, `memory.limit_in_bytes`; v2: `cpu.weight`,
/// `cpu.max`, `memory.max`; an absent limit is written as unlimited). The cgroup must exist
/// ([`ensure_pod_cgroup`]). The kernel refuses a cpu quota below a child cgroup's and a
/// memory limit below what the pod uses: a caller that lowers limits lowers the containers'
/// first. `""` and `/` do nothing.
///
/// # Errors
///
/// [`SpecError::Cgroup`] naming the file and the kernel's reason when a write fails.
pub fn set_pod_cgroup_resources(
    path: &str,
    resources: &PodCgroupResources,
) -> Result<(), SpecError> {
    node(path)?.set(
        path,
        &[
            Setting::CpuShares(resources.cpu_shares),
            Setting::CpuQuota(resources.cpu_quota_us),
            Setting::MemoryLimit(resources.memory_limit_bytes),
        ],
    )
}

/// The cpu and memory limits the pod cgroup `path` holds now; `None` when there is no such
/// cgroup (not made yet, or gone), or no hierarchy with the cpu controller to read. On v2 the
/// shares are converted back from `cpu.weight`, within that conversion's step.
///
/// # Errors
///
/// [`SpecError::Cgroup`] when a file cannot be read or holds no number.
pub fn read_pod_cgroup_resources(path: &str) -> Result<Option<PodCgroupResources>, SpecError> {
    read_resources(node(path)?, path)
}

fn read_resources(cgroups: &Cgroupfs, path: &str) -> Result<Option<PodCgroupResources>, SpecError> {
    let Some(shares) = cgroups.read(path, Setting::CpuShares(0))? else {
        return Ok(None);
    };
    let quota = cgroups.read(path, Setting::CpuQuota(None))?;
    let memory = cgroups.read(path, Setting::MemoryLimit(None))?;
    Ok(Some(PodCgroupResources {
        cpu_shares: shares.0.unwrap_or_default(),
        cpu_quota_us: quota.and_then(|q| q.0),
        memory_limit_bytes: memory.and_then(|m| m.0),
    }))
}

/// Makes node-level cgroup `cgroup` (`kubepods`, a QoS cgroup) and writes its limits: cpu
/// shares, memory limit and process limit (unlimited where `None`).
///
/// # Errors
///
/// [`SpecError::Cgroup`] naming the file and the kernel's reason when a write fails (a
/// memory limit below what the pods use now, say).
pub fn set_node_cgroup(cgroup: &NodeCgroup) -> Result<(), SpecError> {
    apply_node_cgroup(node(&cgroup.path)?, cgroup)
}

fn apply_node_cgroup(cgroups: &Cgroupfs, cgroup: &NodeCgroup) -> Result<(), SpecError> {
    cgroups.ensure(&cgroup.path)?;
    cgroups.set(
        &cgroup.path,
        &[
            Setting::CpuShares(cgroup.cpu_shares),
            Setting::MemoryLimit(cgroup.memory_limit_bytes),
            Setting::PidsMax(cgroup.pids_max),
        ],
    )
}

/// Removes the pod cgroup `path` (only its last level: the QoS cgroups stay) from every
/// cgroup hierarchy, including a controller-less unified one where the runtime made a copy.
/// Removing a missing cgroup succeeds.
///
/// # Errors
///
/// [`SpecError::Cgroup`] when the path is unusable, or a cgroup still holds processes or
/// cannot be removed for another reason.
pub fn remove_pod_cgroup(path: &str) -> Result<(), SpecError> {
    node(path)?.remove(path)
}

/// How many processes the pod cgroup `path` holds (`pids.current` of the hierarchy with the
/// pids controller, or of the unified one); `None` when no hierarchy tells.
#[must_use]
pub fn pod_processes(path: &str) -> Option<u64> {
    node(path).ok()?.processes(path)
}

/// A cgroup's memory as cAdvisor reads it for the Summary API's `pods` container: its limit,
/// its usage and its working set (usage less inactive file pages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CgroupMemory {
    /// The memory limit in bytes; `None`: unlimited.
    pub limit_bytes: Option<u64>,
    /// All memory charged to it, caches included, in bytes.
    pub usage_bytes: u64,
    /// The working set in bytes.
    pub working_set_bytes: u64,
}

/// A cgroup's CPU time as cAdvisor reads it for the Summary API's `pods` container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CgroupCpu {
    /// CPU time used since the cgroup was made, in core-nanoseconds (`cpuacct.usage` on v1,
    /// `cpu.stat` `usage_usec` on v2).
    pub usage_ns: u64,
    /// Its directory's modification time, which cAdvisor (and so upstream's Summary API)
    /// reports as a cgroup's creation time. It moves when a child cgroup is made or removed
    /// directly under it (a Guaranteed pod's, under `kubepods`), as upstream's does; `None`
    /// when it cannot be read.
    pub since: Option<std::time::SystemTime>,
}

/// The memory of node-level cgroup `path` (`/kubepods`); `Ok(None)` when the cgroup or the
/// memory hierarchy is not there.
///
/// # Errors
///
/// [`SpecError::Cgroup`] naming the file when the path is unusable or a memory file cannot be
/// read or parsed.
pub fn memory(path: &str) -> Result<Option<CgroupMemory>, SpecError> {
    node(path)?.memory(path)
}

/// The CPU time of node-level cgroup `path` (`/kubepods`); `Ok(None)` when the cgroup or a
/// hierarchy accounting CPU is not there.
///
/// # Errors
///
/// [`SpecError::Cgroup`] naming the file when the path is unusable or the usage file cannot be
/// read or parsed.
pub fn cpu(path: &str) -> Result<Option<CgroupCpu>, SpecError> {
    node(path)?.cpu(path)
}

/// The node's cgroup hierarchies, read from the mount table once: they are mounted at boot
/// and stay, and reading the whole table (hundreds of lines with many pods) for every pod
/// start and stop was a large share of the agent's own work at 110 pods. `path` names the
/// cgroup in the error.
fn node(path: &str) -> Result<&'static Cgroupfs, SpecError> {
    static NODE: OnceLock<Cgroupfs> = OnceLock::new();
    if let Some(found) = NODE.get() {
        return Ok(found);
    }
    let mounts = mountinfo::mounts().map_err(|e| SpecError::cgroup(path, e.to_string()))?;
    Ok(NODE.get_or_init(|| Cgroupfs::from_mounts(&mounts)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mountinfo::MountEntry;

    fn has_controller(hierarchy: &MountEntry, controller: &str) -> bool {
        hierarchy.super_options.split(',').any(|o| o == controller)
    }

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
