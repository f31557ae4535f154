//! What sergeant does to a cgroup, on any [`Cgroupfs`]: make it (with the controllers it needs
//! enabled on the way down, on v2), write and read its limits, count its processes, remove it.

use std::io::ErrorKind;
use std::path::Path;

use sergeant_core::spec::{io_reason, SpecError};

use super::files::{read_back, Setting, CPU_PERIOD_US};
use super::fs::{relative, write, Cgroupfs, Version};
use super::{CgroupCpu, CgroupMemory};
use crate::stats::memory::stat_value;
use crate::stats::ParseError;

/// The controllers whose limits sergeant writes, enabled for the children of every cgroup on
/// the way to a pod's on a unified hierarchy.
const CONTROLLERS: [&str; 3] = ["cpu", "memory", "pids"];

impl Cgroupfs {
    /// Makes cgroup `path` (and its parents) in every hierarchy that needs it: each v1 one,
    /// and a unified one with controllers, whose ancestors get `+cpu +memory +pids` (those it
    /// has) in `cgroup.subtree_control`. A controller-less unified mount (a hybrid node) is
    /// left to the runtime, which makes its copy when it places a container.
    pub(crate) fn ensure(&self, path: &str) -> Result<(), SpecError> {
        let Some(relative) = relative(path)? else {
            return Ok(());
        };
        for hierarchy in &self.hierarchies {
            match hierarchy.version {
                Version::V1 => {}
                Version::Unified if hierarchy.controllers.is_empty() => continue,
                Version::Unified => {
                    let enable: Vec<String> = CONTROLLERS
                        .iter()
                        .filter(|c| hierarchy.has(c))
                        .map(|c| format!("+{c}"))
                        .collect();
                    let mut dir = hierarchy.mount.clone();
                    for part in relative.split('/') {
                        write(path, &dir.join("cgroup.subtree_control"), &enable.join(" "))?;
                        dir.push(part);
                        make_dir(path, &dir)?;
                    }
                }
            }
            make_dir(path, &hierarchy.dir(relative))?;
        }
        Ok(())
    }

    /// Writes `settings` to cgroup `path`, each to the hierarchy of its controller; a setting
    /// whose controller no hierarchy has is skipped.
    pub(crate) fn set(&self, path: &str, settings: &[Setting]) -> Result<(), SpecError> {
        let Some(relative) = relative(path)? else {
            return Ok(());
        };
        for setting in settings {
            for version in [Version::V1, Version::Unified] {
                for (controller, file, value) in setting.files(version) {
                    let Some(hierarchy) = self
                        .for_controller(controller)
                        .filter(|h| h.version == version)
                    else {
                        continue;
                    };
                    write(path, &hierarchy.dir(relative).join(file), &value)?;
                }
            }
        }
        Ok(())
    }

    /// The value of `setting`'s kind in cgroup `path`, in the setting's units; `Ok(None)` when
    /// the cgroup or the controller's hierarchy is not there.
    pub(crate) fn read(&self, path: &str, kind: Setting) -> Result<Option<Read>, SpecError> {
        let Some(relative) = relative(path)? else {
            return Ok(None);
        };
        let controller = kind.files(Version::V1)[0].0;
        let Some(hierarchy) = self.for_controller(controller) else {
            return Ok(None);
        };
        let dir = hierarchy.dir(relative);
        if !dir.is_dir() {
            return Ok(None);
        }
        let read = |file: &str| -> Result<Option<i64>, SpecError> {
            let file_path = dir.join(file);
            let text = std::fs::read_to_string(&file_path).map_err(|e| {
                SpecError::cgroup(path, format!("{}: {}", file_path.display(), io_reason(&e)))
            })?;
            read_back(file, &text).map_err(|reason| {
                SpecError::cgroup(path, format!("{}: {reason}", file_path.display()))
            })
        };
        let files = kind.files(hierarchy.version);
        let value = match (kind, hierarchy.version) {
            // v1 keeps the quota and its period apart: scale the quota to sergeant's period.
            (Setting::CpuQuota(_), Version::V1) => {
                match (read("cpu.cfs_quota_us")?, read("cpu.cfs_period_us")?) {
                    (Some(quota), Some(period)) if period > 0 => {
                        Some(quota.saturating_mul(CPU_PERIOD_US) / period)
                    }
                    _ => None,
                }
            }
            _ => read(files[0].1)?,
        };
        Ok(Some(Read(value)))
    }

    /// The memory of cgroup `path` as cAdvisor reads it (see [`CgroupMemory`]); `Ok(None)`
    /// when the cgroup or the memory controller's hierarchy is not there.
    pub(crate) fn memory(&self, path: &str) -> Result<Option<CgroupMemory>, SpecError> {
        let Some(Read(limit)) = self.read(path, Setting::MemoryLimit(None))? else {
            return Ok(None);
        };
        let Some(hierarchy) = self.for_controller("memory") else {
            return Ok(None);
        };
        let dir = hierarchy.dir(relative(path)?.unwrap_or_default());
        let (usage_file, inactive_key) = match hierarchy.version {
            Version::V1 => ("memory.usage_in_bytes", "total_inactive_file"),
            Version::Unified => ("memory.current", "inactive_file"),
        };
        let read = |file: &str, parse: &dyn Fn(&str) -> Result<u64, ParseError>| {
            let file_path = dir.join(file);
            let failed = |reason: String| {
                SpecError::cgroup(path, format!("{}: {reason}", file_path.display()))
            };
            let text = std::fs::read_to_string(&file_path).map_err(|e| failed(io_reason(&e)))?;
            parse(&text).map_err(|e| failed(e.to_string()))
        };
        let usage = read(usage_file, &value)?;
        let inactive = read("memory.stat", &|text| stat_value(text, inactive_key))?;
        Ok(Some(CgroupMemory {
            limit_bytes: limit.and_then(|l| u64::try_from(l).ok()),
            usage_bytes: usage,
            working_set_bytes: usage.saturating_sub(inactive),
        }))
    }

    /// The CPU time of cgroup `path` and when it was made (see [`CgroupCpu`]); `Ok(None)` when
    /// the cgroup or a hierarchy accounting its CPU is not there.
    pub(crate) fn cpu(&self, path: &str) -> Result<Option<CgroupCpu>, SpecError> {
        let relative = relative(path)?.unwrap_or_default();
        let v1 = self
            .for_controller("cpuacct")
            .filter(|h| h.version == Version::V1);
        let unified = || {
            self.hierarchies
                .iter()
                .find(|h| h.version == Version::Unified && !h.controllers.is_empty())
        };
        let (dir, file) = match (v1, unified()) {
            (Some(h), _) => (h.dir(relative), "cpuacct.usage"),
            (None, Some(h)) => (h.dir(relative), "cpu.stat"),
            (None, None) => return Ok(None),
        };
        let file_path = dir.join(file);
        let text = match std::fs::read_to_string(&file_path) {
            Ok(text) => text,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                let reason = format!("{}: {}", file_path.display(), io_reason(&e));
                return Err(SpecError::cgroup(path, reason));
            }
        };
        let usage_ns = if file == "cpu.stat" {
            stat_value(&text, "usage_usec").map(|usec| usec.saturating_mul(1000))
        } else {
            value(&text)
        }
        .map_err(|reason| SpecError::cgroup(path, format!("{}: {reason}", file_path.display())))?;
        let since = std::fs::metadata(&dir).and_then(|m| m.modified()).ok();
        Ok(Some(CgroupCpu { usage_ns, since }))
    }

    /// Removes cgroup `path` (its last level) from every hierarchy; a missing one is fine.
    pub(crate) fn remove(&self, path: &str) -> Result<(), SpecError> {
        let Some(relative) = relative(path)? else {
            return Ok(());
        };
        for hierarchy in &self.hierarchies {
            let dir = hierarchy.dir(relative);
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

    /// How many processes cgroup `path` holds (`pids.current` of the hierarchy with the pids
    /// controller, or of a unified one); `None` when none tells.
    pub(crate) fn processes(&self, path: &str) -> Option<u64> {
        let relative = relative(path).ok()??;
        self.hierarchies
            .iter()
            .filter(|h| h.version == Version::Unified || h.has("pids"))
            .find_map(|h| {
                std::fs::read_to_string(h.dir(relative).join("pids.current"))
                    .ok()?
                    .trim()
                    .parse()
                    .ok()
            })
    }
}

/// A limit read back: `Read(None)` is unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Read(pub(crate) Option<i64>);

/// The number a file of one value holds.
fn value(text: &str) -> Result<u64, ParseError> {
    text.trim().parse().map_err(|source| ParseError::BadValue {
        text: text.to_owned(),
        source,
    })
}

fn make_dir(path: &str, dir: &Path) -> Result<(), SpecError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| SpecError::cgroup(path, format!("{}: {}", dir.display(), io_reason(&e))))
}
