//! The host-side numbers of the pods: their network namespaces' traffic, their log
//! directories' size, and the filesystems their writable layers live on. Blocking; read for
//! all pods in one go on a blocking thread.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::clock::Clock;
use super::pods::PodPlan;
use super::sandbox::SandboxInfo;
use super::types::{FsStats, NetworkStats};
use super::{fs, network};

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
}

/// The host-side numbers of all pods, and of the filesystems asked for.
#[derive(Debug, Default)]
pub struct Host {
    /// One per pod, in the plans' order.
    pub pods: Vec<PodHost>,
    /// The filesystems, by mount point; those that could not be examined are missing.
    pub filesystems: HashMap<String, FsStats>,
}

/// Reads the numbers of `plans` (whose sandboxes are `infos`, in the same order) and of the
/// filesystems at `mountpoints`.
#[must_use]
pub fn gather(
    plans: &[PodPlan],
    infos: &[SandboxInfo],
    mountpoints: &[String],
    clock: Clock,
) -> Host {
    let pods = plans
        .iter()
        .zip(infos)
        .map(|(plan, info)| pod(plan, info, clock))
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
    Host { pods, filesystems }
}

fn pod(plan: &PodPlan, info: &SandboxInfo, clock: Clock) -> PodHost {
    let network = info.pid.and_then(|pid| {
        let net = PathBuf::from(format!("/proc/{pid}/net"));
        network::namespace(&net, clock)
            .inspect_err(|err| tracing::debug!(pod = %plan.pod_ref.name, "pod network: {err}"))
            .ok()
    });
    let Some(dir) = &info.log_directory else {
        return PodHost {
            network,
            ..PodHost::default()
        };
    };
    PodHost {
        network,
        logs_fs: fs::filesystem(dir, clock).ok(),
        pod_logs: fs::usage(dir),
        container_logs: plan
            .containers
            .iter()
            .map(|c| (c.name.clone(), fs::usage(&dir.join(&c.name))))
            .collect(),
    }
}
