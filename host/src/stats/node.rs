//! The node's own numbers, from the kernel: CPU (`/proc/stat`), memory ([`memory`]), network
//! (`/proc/net`), the root directory's filesystem and the process limit and count. Blocking;
//! the Summary API's node section and the eviction signals are made from one [`NodeSample`].

use std::path::{Path, PathBuf};

use super::clock::Clock;
use super::error::{HostStatsError, ParseError};
use super::procfs::{self, ProcStat};
use super::{fs, memory, network};
use sergeant_core::stats::summary::{FsStats, MemoryStats, NetworkStats, RlimitStats};

/// Where procfs is.
pub const PROC: &str = "/proc";

/// One reading of the node's kernel counters, before the CPU rate is known.
#[derive(Debug)]
pub struct NodeSample {
    /// When it was read.
    pub clock: Clock,
    /// The CPU time and boot time.
    pub stat: ProcStat,
    /// The root cgroup's memory ([`memory::read`]).
    pub memory: MemoryStats,
    /// The node's network namespace, when it can be read.
    pub network: Option<NetworkStats>,
    /// The filesystem of the kubelet's root directory (nodefs).
    pub fs: FsStats,
    /// The device of that filesystem ([`fs::device`]), to tell whether the runtime's image
    /// filesystem is another one.
    pub fs_device: Option<u64>,
    /// The process limit and count.
    pub rlimit: RlimitStats,
}

/// Reads the node's counters and the filesystem of `root_dir`. Blocking.
///
/// # Errors
/// [`HostStatsError`] naming the kernel file or directory that could not be read.
pub fn sample(root_dir: &Path) -> Result<NodeSample, HostStatsError> {
    let proc = PathBuf::from(PROC);
    let clock = Clock::read();
    let stat = procfs::read(&proc.join("stat"), procfs::stat)?;
    let memory = memory::read(&proc, Path::new(memory::CGROUP_ROOT), clock)?;
    let network = network::namespace(&proc.join("net"), clock)
        .inspect_err(|err| tracing::debug!("node network stats: {err}"))
        .ok();
    let fs = fs::filesystem(root_dir, clock)?;
    let fs_device = fs::device(root_dir);
    let rlimit = RlimitStats {
        time: clock.time(),
        maxpid: procfs::read(&proc.join("sys/kernel/pid_max"), |text| {
            text.trim().parse::<i64>().map_err(ParseError::from)
        })
        .ok(),
        curproc: procfs::read(&proc.join("loadavg"), procfs::loadavg_processes).ok(),
    };
    Ok(NodeSample {
        clock,
        stat,
        memory,
        network,
        fs,
        fs_device,
        rlimit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_node_has_plausible_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let first = sample(dir.path()).unwrap();
        assert!(first.memory.working_set_bytes.unwrap() > 0);
        assert!(first.rlimit.maxpid.unwrap() > 0);
        assert!(first.rlimit.curproc.unwrap() > 0);
        assert!(first.fs.capacity_bytes.unwrap() > 0);
        assert!(first.fs_device.is_some());
        assert!(first.stat.busy_core_nanos > 0);
    }
}
