//! The host-side numbers of the pod sandboxes: their network namespaces' traffic, their log
//! directories' size, their volumes, and the filesystems their writable layers live on. Blocking; read for
//! all sandboxes in one go on a blocking thread.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::clock::Clock;

use super::volumes::{self, PodVolumes};
use super::{fs, network};
use sergeant_core::stats::summary::{FsStats, NetworkStats};

/// A sandbox's pid and log directory, when the runtime tells them (its verbose status).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxInfo {
    /// The pid of the sandbox's process; `/proc/<pid>/net` is the pod's network.
    pub pid: Option<u32>,
    /// Where the pod's container logs are (`<dir>/<container>/<n>.log`).
    pub log_directory: Option<PathBuf>,
}

/// One sandbox to read the numbers of.
#[derive(Debug)]
pub struct Target {
    /// Its runtime id.
    pub sandbox_id: String,
    /// Its pid and log directory.
    pub info: SandboxInfo,
    /// The names of its running containers, whose log directories are measured.
    pub containers: Vec<String>,
    /// The pod's directory on the node, where its volumes are, when the sandbox names its pod.
    pub pod_dir: Option<PathBuf>,
}

/// A pod's host-side numbers.
#[derive(Debug, Default)]
pub struct PodHost {
    /// The traffic of the pod's network namespace, when its sandbox pid is known.
    pub network: Option<NetworkStats>,
    /// The filesystem of the pod's log directory, when it is known.
    pub logs_fs: Option<FsStats>,
    /// What the whole log directory uses: `(bytes, inodes)`.
    pub pod_logs: (u64, u64),
    /// What each container's log directory uses, by container name.
    pub container_logs: HashMap<String, (u64, u64)>,
    /// The pod's volumes.
    pub volumes: PodVolumes,
}

/// The host-side numbers of all sandboxes, and of the filesystems asked for.
#[derive(Debug, Default)]
pub struct Host {
    /// By sandbox id.
    pub pods: HashMap<String, PodHost>,
    /// The filesystems, by mount point; those that could not be examined are missing.
    pub filesystems: HashMap<String, FsStats>,
    /// The device of each of those filesystems ([`fs::device`]), by mount point.
    pub devices: HashMap<String, u64>,
}

/// Reads the numbers of `targets` and of the filesystems at `mountpoints`.
#[must_use]
pub fn gather(targets: &[Target], mountpoints: &[String], clock: Clock) -> Host {
    let pods = targets
        .iter()
        .map(|target| (target.sandbox_id.clone(), pod(target, clock)))
        .collect();
    let filesystems = mountpoints
        .iter()
        .filter_map(|mount| {
            fs::filesystem(Path::new(mount), clock)
                .inspect_err(|err| tracing::debug!("{err}"))
                .ok()
                .map(|stats| (mount.clone(), stats))
        })
        .collect();
    let devices = mountpoints
        .iter()
        .filter_map(|mount| Some((mount.clone(), fs::device(Path::new(mount))?)))
        .collect();
    Host {
        pods,
        filesystems,
        devices,
    }
}

fn pod(target: &Target, clock: Clock) -> PodHost {
    let network = target.info.pid.and_then(|pid| {
        let net = PathBuf::from(format!("/proc/{pid}/net"));
        network::namespace(&net, clock)
            .inspect_err(|err| tracing::debug!(sandbox = %target.sandbox_id, "pod network: {err}"))
            .ok()
    });
    let volumes = target
        .pod_dir
        .as_deref()
        .map(|dir| volumes::read(dir, clock))
        .unwrap_or_default();
    let Some(dir) = &target.info.log_directory else {
        return PodHost {
            network,
            volumes,
            ..PodHost::default()
        };
    };
    PodHost {
        network,
        volumes,
        logs_fs: fs::filesystem(dir, clock).ok(),
        pod_logs: fs::usage(dir),
        container_logs: target
            .containers
            .iter()
            .map(|name| (name.clone(), fs::usage(&dir.join(name))))
            .collect(),
    }
}
