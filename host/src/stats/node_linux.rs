//! The node's numbers on Linux, from the kernel: CPU (`/proc/stat`), memory (the
//! root cgroup), network (`/proc/net`), the root directory's filesystem and the process limit
//! and count. There is no commit charge to report.

use std::path::{Path, PathBuf};

use super::super::clock::Clock;
use super::super::error::{HostStatsError, ParseError};
use super::super::procfs;
use super::super::{fs, memory, network};
use super::NodeSample;
use sergeant_core::stats::summary::RlimitStats;

/// Where procfs is.
const PROC: &str = "/proc";

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
        commit: None,
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
