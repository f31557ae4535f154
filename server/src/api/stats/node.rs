//! The node section of the summary, from the kernel: CPU (`/proc/stat`), memory
//! (`/proc/meminfo`, `/proc/vmstat`), network (`/proc/net`), the root directory's filesystem
//! and the process limit. Reading is blocking; the CPU rate needs the kept previous sample.

use std::path::{Path, PathBuf};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::clock::Clock;
use super::error::StatsError;
use super::procfs::{self, ProcStat};
use super::rate::{CpuRates, NODE};
use super::types::{CpuStats, FsStats, MemoryStats, NetworkStats, NodeStats, RlimitStats};
use super::{fs, network};

/// Where procfs is.
const PROC: &str = "/proc";

/// One reading of the node's kernel counters, before the CPU rate is known.
#[derive(Debug)]
pub struct NodeSample {
    clock: Clock,
    stat: ProcStat,
    memory: MemoryStats,
    network: Option<NetworkStats>,
    fs: FsStats,
    rlimit: RlimitStats,
}

/// Reads the node's counters and the filesystem of `root_dir`. Blocking.
///
/// # Errors
/// [`StatsError`] naming the kernel file or directory that could not be read.
pub fn sample(root_dir: &Path) -> Result<NodeSample, StatsError> {
    let proc = PathBuf::from(PROC);
    let clock = Clock::read();
    let stat = procfs::read(&proc.join("stat"), procfs::stat)?;
    let memory = memory(&proc, clock)?;
    let network = network::namespace(&proc.join("net"), clock)
        .inspect_err(|err| tracing::debug!("node network stats: {err}"))
        .ok();
    let fs = fs::filesystem(root_dir, clock)?;
    let rlimit = RlimitStats {
        time: clock.time(),
        maxpid: procfs::read(&proc.join("sys/kernel/pid_max"), |text| {
            text.trim().parse::<i64>().map_err(|e| e.to_string())
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
        rlimit,
    })
}

/// The node's memory: usage is what is not free, the working set is usage less the inactive
/// page cache, and available is capacity less the working set (upstream's definitions).
fn memory(proc: &Path, clock: Clock) -> Result<MemoryStats, StatsError> {
    let info = procfs::read(&proc.join("meminfo"), procfs::meminfo)?;
    let (faults, major_faults) = procfs::read(&proc.join("vmstat"), procfs::vmstat_faults)?;
    let usage = info.total.saturating_sub(info.free);
    let working_set = usage.saturating_sub(info.inactive_file);
    Ok(MemoryStats {
        time: clock.time(),
        available_bytes: Some(info.total.saturating_sub(working_set)),
        usage_bytes: Some(usage),
        working_set_bytes: Some(working_set),
        rss_bytes: Some(info.anon),
        page_faults: Some(faults),
        major_page_faults: Some(major_faults),
    })
}

impl NodeSample {
    /// The filesystem of the kubelet's root directory.
    #[must_use]
    pub fn root_fs(&self) -> &FsStats {
        &self.fs
    }

    /// The node section, its CPU rate taken against the node's previous sample in `rates`.
    pub fn into_stats(
        self,
        node_name: String,
        rates: &mut CpuRates,
        image_fs: Option<FsStats>,
    ) -> NodeStats {
        let usage = self.stat.busy_core_nanos;
        NodeStats {
            node_name,
            start_time: Time(
                Timestamp::from_second(self.stat.boot_time).unwrap_or(Timestamp::UNIX_EPOCH),
            ),
            cpu: Some(CpuStats {
                time: self.clock.time(),
                usage_nano_cores: rates.rate(NODE, self.clock.ns(), usage),
                usage_core_nano_seconds: Some(usage),
            }),
            memory: Some(self.memory),
            network: self.network,
            fs: Some(self.fs),
            runtime: Some(super::types::RuntimeStats { image_fs }),
            rlimit: Some(self.rlimit),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_node_has_plausible_numbers_and_a_rate_on_the_second_sample() {
        let dir = tempfile::tempdir().unwrap();
        let mut rates = CpuRates::default();
        let first = sample(dir.path())
            .unwrap()
            .into_stats("n".into(), &mut rates, None);
        let memory = first.memory.unwrap();
        assert!(memory.working_set_bytes.unwrap() > 0);
        assert!(memory.usage_bytes.unwrap() >= memory.working_set_bytes.unwrap());
        assert!(first.rlimit.unwrap().maxpid.unwrap() > 0);
        let cpu = first.cpu.unwrap();
        assert_eq!(cpu.usage_nano_cores, None);
        std::thread::sleep(std::time::Duration::from_millis(1100));
        let second = sample(dir.path())
            .unwrap()
            .into_stats("n".into(), &mut rates, None);
        let later = second.cpu.unwrap();
        assert!(later.usage_core_nano_seconds >= cpu.usage_core_nano_seconds);
        assert!(later.usage_nano_cores.is_some());
    }
}
