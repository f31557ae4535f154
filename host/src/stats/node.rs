//! The node's own numbers, as one [`NodeSample`] the Summary API's node section and the
//! eviction signals are made from: CPU time, memory, network, the root directory's filesystem,
//! the process limit and count, and on Windows the machine's commit charge. Where they are
//! read differs by operating system: the kernel's files on Linux (`node_linux.rs`: procfs and
//! the root cgroup, [`memory`](super::memory)), Windows' system calls on Windows
//! (`node_windows.rs`). Blocking.
//!
//! Entry point: [`sample`].

use super::clock::Clock;
use super::procfs::ProcStat;
use sergeant_core::stats::summary::{FsStats, MemoryStats, NetworkStats, RlimitStats};
use sergeant_core::stats::windows::system::CommitMemory;

#[cfg(not(windows))]
#[path = "node_linux.rs"]
mod platform;
#[cfg(windows)]
#[path = "node_windows.rs"]
mod platform;

pub use platform::sample;

/// One reading of the node's counters, before the CPU rate is known.
#[derive(Debug)]
pub struct NodeSample {
    /// When it was read.
    pub clock: Clock,
    /// The CPU time and boot time (`/proc/stat`'s on Linux; on Windows `GetSystemTimes`' busy
    /// time and the boot time `GetTickCount64` gives).
    pub stat: ProcStat,
    /// The node's memory.
    pub memory: MemoryStats,
    /// The node's network, when it can be read.
    pub network: Option<NetworkStats>,
    /// The filesystem of the kubelet's root directory (nodefs).
    pub fs: FsStats,
    /// The device of that filesystem ([`fs::device`](super::fs::device)), to tell whether the
    /// runtime's image filesystem is another one.
    pub fs_device: Option<u64>,
    /// The process limit and count.
    pub rlimit: RlimitStats,
    /// The machine's commit charge and limit: Windows only, where `memory.available` is
    /// taken from it.
    pub commit: Option<CommitMemory>,
}
