//! The node's cgroup file systems: which hierarchies there are (cgroup v1 ones with their
//! controllers, a unified v2 one with the controllers its `cgroup.controllers` lists), found
//! from the mount table once, and where a cgroup path lives in each. A [`Cgroupfs`] can also be
//! rooted in a plain directory tree, which is how the v2 path is tested on these v1 machines.

use std::path::{Path, PathBuf};

use sergeant_core::spec::{io_reason, is_safe_path_component, SpecError};

use crate::mountinfo::MountEntry;

/// A hierarchy's cgroup version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    /// cgroup v1: one hierarchy per controller group.
    V1,
    /// cgroup v2: one hierarchy for every controller.
    Unified,
}

/// One mounted cgroup hierarchy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hierarchy {
    /// Where it is mounted.
    pub(crate) mount: PathBuf,
    /// Its version.
    pub(crate) version: Version,
    /// The controllers it has (v1: from the mount options; v2: from `cgroup.controllers`,
    /// empty for the controller-less unified mount of a hybrid node).
    pub(crate) controllers: Vec<String>,
}

impl Hierarchy {
    /// Whether `controller` is attached here.
    pub(crate) fn has(&self, controller: &str) -> bool {
        self.controllers.iter().any(|c| c == controller)
    }

    /// Where cgroup `relative` (no leading `/`) is in this hierarchy.
    pub(crate) fn dir(&self, relative: &str) -> PathBuf {
        self.mount.join(relative)
    }
}

/// The node's cgroup hierarchies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cgroupfs {
    pub(crate) hierarchies: Vec<Hierarchy>,
}

impl Cgroupfs {
    /// The hierarchies among `mounts`; a unified one's controllers are read from its root.
    pub(crate) fn from_mounts(mounts: &[MountEntry]) -> Self {
        let hierarchies = mounts
            .iter()
            .filter_map(|m| match m.fs_type.as_str() {
                "cgroup" => Some(Hierarchy {
                    mount: m.mount_point.clone(),
                    version: Version::V1,
                    controllers: m.super_options.split(',').map(str::to_owned).collect(),
                }),
                "cgroup2" => Some(unified_at(&m.mount_point)),
                _ => None,
            })
            .collect();
        Self { hierarchies }
    }

    /// A unified (v2) hierarchy rooted at `root`, a directory holding `cgroup.controllers`.
    #[cfg(test)]
    pub(crate) fn unified(root: &Path) -> Self {
        Self {
            hierarchies: vec![unified_at(root)],
        }
    }

    /// The hierarchy a limit of `controller` is written in: the v1 one that has it, or the
    /// unified one when it has it.
    pub(crate) fn for_controller(&self, controller: &str) -> Option<&Hierarchy> {
        self.hierarchies.iter().find(|h| h.has(controller))
    }
}

fn unified_at(root: &Path) -> Hierarchy {
    let controllers = std::fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default();
    Hierarchy {
        mount: root.to_path_buf(),
        version: Version::Unified,
        controllers: controllers.split_whitespace().map(str::to_owned).collect(),
    }
}

/// `path` without its leading `/`, checked: `None` for the root cgroup.
///
/// # Errors
///
/// [`SpecError::Cgroup`] when the path is relative or has empty, `.` or `..` parts.
pub(crate) fn relative(path: &str) -> Result<Option<&str>, SpecError> {
    let relative = path.trim_start_matches('/');
    if relative.is_empty() {
        return Ok(None);
    }
    if !path.starts_with('/') || !relative.split('/').all(is_safe_path_component) {
        return Err(SpecError::cgroup(
            path,
            "must be an absolute path without empty, `.` or `..` parts",
        ));
    }
    Ok(Some(relative))
}

/// Writes `value` to `file`, an error naming cgroup `path`, the file and the kernel's reason.
pub(crate) fn write(path: &str, file: &Path, value: &str) -> Result<(), SpecError> {
    std::fs::write(file, value).map_err(|e| {
        SpecError::cgroup(
            path,
            format!("{}: writing {value}: {}", file.display(), io_reason(&e)),
        )
    })
}
