//! The node's memory as upstream defines it for the Summary API and the `memory.available`
//! eviction signal: capacity is `MemTotal`, the working set is the root memory cgroup's usage
//! less its inactive page cache, and available is capacity less the working set (never
//! `MemAvailable`). On cgroup v1 the root cgroup reports its usage
//! (`memory.usage_in_bytes`) and `total_inactive_file`; on cgroup v2 the root has no
//! `memory.current`, so its usage is `MemTotal - MemFree` and its inactive page cache is
//! `inactive_file` of the root `memory.stat`, as runc reads them for cAdvisor.

use std::path::Path;

use sergeant_core::stats::summary::MemoryStats;

use super::clock::Clock;
use super::error::{HostStatsError, ParseError};
use super::procfs;

/// Where the cgroup hierarchies are mounted.
pub const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// Reads the node's memory from procfs at `proc` and the cgroups at `cgroup_root`.
///
/// # Errors
/// [`HostStatsError`] naming the file that could not be read or parsed.
pub fn read(proc: &Path, cgroup_root: &Path, clock: Clock) -> Result<MemoryStats, HostStatsError> {
    let info = procfs::read(&proc.join("meminfo"), procfs::meminfo)?;
    let (faults, major_faults) = procfs::read(&proc.join("vmstat"), procfs::vmstat_faults)?;
    let v1 = cgroup_root.join("memory");
    let (usage, inactive_file) = if v1.join("memory.usage_in_bytes").exists() {
        let usage = procfs::read(&v1.join("memory.usage_in_bytes"), parse_bytes)?;
        let stat = v1.join("memory.stat");
        (
            usage,
            procfs::read(&stat, |t| stat_value(t, "total_inactive_file"))?,
        )
    } else {
        let stat = cgroup_root.join("memory.stat");
        let usage = info.total.saturating_sub(info.free);
        (
            usage,
            procfs::read(&stat, |t| stat_value(t, "inactive_file"))?,
        )
    };
    let working_set = usage.saturating_sub(inactive_file);
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

/// A file holding one number of bytes.
fn parse_bytes(text: &str) -> Result<u64, ParseError> {
    Ok(text.trim().parse()?)
}

/// The value of `key` in a `memory.stat` file (`key value` lines).
///
/// # Errors
/// [`ParseError`] when the key is missing or its value is not a number.
pub fn stat_value(text: &str, key: &str) -> Result<u64, ParseError> {
    text.lines()
        .find_map(|line| line.strip_prefix(key)?.strip_prefix(' '))
        .ok_or_else(|| ParseError::missing(format!("{key:?} line")))?
        .trim()
        .parse()
        .map_err(ParseError::bad_number(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_stat_values_are_found_by_their_exact_key() {
        let text = "inactive_file 10\ntotal_inactive_file 4096\n";
        assert_eq!(stat_value(text, "total_inactive_file"), Ok(4096));
        assert_eq!(stat_value(text, "inactive_file"), Ok(10));
        assert_eq!(
            stat_value(text, "active_file").unwrap_err().to_string(),
            "no \"active_file\" line"
        );
        assert!(stat_value("inactive_file x\n", "inactive_file").is_err());
    }

    #[test]
    fn a_v1_root_cgroup_gives_usage_less_inactive_file() {
        let dir = tempfile::tempdir().unwrap();
        let proc = dir.path().join("proc");
        let cgroup = dir.path().join("cgroup");
        std::fs::create_dir_all(&proc).unwrap();
        std::fs::create_dir_all(cgroup.join("memory")).unwrap();
        std::fs::write(
            proc.join("meminfo"),
            "MemTotal: 1000 kB\nMemFree: 100 kB\nInactive(file): 300 kB\nAnonPages: 200 kB\n",
        )
        .unwrap();
        std::fs::write(proc.join("vmstat"), "pgfault 5\npgmajfault 1\n").unwrap();
        std::fs::write(cgroup.join("memory/memory.usage_in_bytes"), "512000\n").unwrap();
        std::fs::write(
            cgroup.join("memory/memory.stat"),
            "inactive_file 1\ntotal_inactive_file 102400\n",
        )
        .unwrap();
        let memory = read(&proc, &cgroup, Clock::read()).unwrap();
        assert_eq!(memory.usage_bytes, Some(512_000));
        assert_eq!(memory.working_set_bytes, Some(409_600));
        assert_eq!(memory.available_bytes, Some(1_024_000 - 409_600));
        // cgroup v2: no usage file at the root, usage from meminfo.
        std::fs::remove_dir_all(cgroup.join("memory")).unwrap();
        std::fs::write(cgroup.join("memory.stat"), "inactive_file 102400\n").unwrap();
        let memory = read(&proc, &cgroup, Clock::read()).unwrap();
        assert_eq!(memory.usage_bytes, Some(900 * 1024));
        assert_eq!(memory.working_set_bytes, Some(900 * 1024 - 102_400));
    }

    #[test]
    fn this_node_has_a_working_set_below_its_capacity() {
        let memory = read(Path::new("/proc"), Path::new(CGROUP_ROOT), Clock::read()).unwrap();
        assert!(memory.working_set_bytes.unwrap() > 0);
        assert!(memory.available_bytes.unwrap() > 0);
    }
}
