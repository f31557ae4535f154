//! The node's numbers on Windows, from the system calls that give the quantities upstream's
//! Windows kubelet reports (it reads some from performance counters through PDH, which Wine 8
//! does not have for memory; the calls here answer the same quantities there and on Windows):
//!
//! - CPU: `GetSystemTimes`, kernel plus user time less idle time over every processor, in
//!   100 ns units: the cumulative time `\Processor(_Total)\% Processor Time` is the rate of.
//! - memory: capacity is `GlobalMemoryStatusEx`'s total physical memory; the working set is
//!   the sum of every process's private working set from
//!   `NtQuerySystemInformation(SystemProcessInformation)` ([`process_list`]), which is what
//!   `\Process(_Total)\Working Set - Private` counts; usage is the commit charge
//!   (`GetPerformanceInfo`'s commit total times the page size, what `\Memory\Committed Bytes`
//!   counts); available is capacity less the working set, as upstream computes it.
//! - the commit charge and limit (`GetPerformanceInfo`) for the `windows-global-commit-memory`
//!   system container and the `memory.available` eviction signal.
//! - the root directory's filesystem: `GetDiskFreeSpaceExW` ([`fs::filesystem`]).
//! - boot time: now less `GetTickCount64`.
//!
//! Not read: network interfaces (upstream reads adapter counters through PDH) and the process
//! limit, which upstream does not report on Windows either.

use std::io;
use std::path::Path;

use windows_sys::Wdk::System::SystemInformation::{
    NtQuerySystemInformation, SystemProcessInformation,
};
use windows_sys::Win32::Foundation::{FILETIME, STATUS_INFO_LENGTH_MISMATCH};
use windows_sys::Win32::System::ProcessStatus::{K32GetPerformanceInfo, PERFORMANCE_INFORMATION};
use windows_sys::Win32::System::SystemInformation::GetTickCount64;
use windows_sys::Win32::System::Threading::GetSystemTimes;

use super::super::clock::Clock;
use super::super::error::HostStatsError;
use super::super::fs;
use super::super::process_list;
use super::super::procfs::ProcStat;
use super::NodeSample;
use crate::machine::memory_capacity;
use sergeant_core::stats::summary::{MemoryStats, RlimitStats};
use sergeant_core::stats::windows::system::CommitMemory;

/// Nanoseconds per unit of `GetSystemTimes`' times.
const NANOS_PER_UNIT: u64 = 100;
/// The first buffer size tried for the process list; it grows to what the call asks for.
const PROCESS_LIST_START: usize = 256 * 1024;
/// The largest process list read (a machine with tens of thousands of processes).
const PROCESS_LIST_MAX: usize = 64 * 1024 * 1024;

/// Reads the node's counters and the filesystem of `root_dir`. Blocking.
///
/// # Errors
/// [`HostStatsError`] naming the call that failed or the directory that could not be
/// examined.
pub fn sample(root_dir: &Path) -> Result<NodeSample, HostStatsError> {
    let clock = Clock::read();
    let commit = commit()?;
    let capacity = memory_capacity().map_err(|err| HostStatsError::SystemCall {
        call: "GlobalMemoryStatusEx",
        source: io::Error::other(err.to_string()),
    })?;
    let working_set = private_working_set()?;
    let memory = MemoryStats {
        time: clock.time(),
        available_bytes: Some(capacity.saturating_sub(working_set)),
        usage_bytes: Some(commit.total_bytes),
        working_set_bytes: Some(working_set),
        rss_bytes: None,
        page_faults: None,
        major_page_faults: None,
    };
    let fs = fs::filesystem(root_dir, clock)?;
    Ok(NodeSample {
        clock,
        stat: ProcStat {
            busy_core_nanos: busy_core_nanos()?,
            boot_time: boot_time(clock),
        },
        memory,
        network: None,
        fs,
        fs_device: fs::device(root_dir),
        rlimit: RlimitStats {
            time: clock.time(),
            maxpid: None,
            curproc: None,
        },
        commit: Some(commit),
    })
}

/// The CPU time every processor spent on anything but idling since boot, in nanoseconds.
fn busy_core_nanos() -> Result<u64, HostStatsError> {
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut idle, mut kernel, mut user) = (zero, zero, zero);
    // SAFETY: the three out-pointers point to live FILETIMEs.
    if unsafe { GetSystemTimes(&mut idle, &mut kernel, &mut user) } == 0 {
        return Err(system_call("GetSystemTimes"));
    }
    let units =
        |time: FILETIME| u64::from(time.dwHighDateTime) << 32 | u64::from(time.dwLowDateTime);
    // Kernel time includes idle time.
    let busy = units(kernel)
        .saturating_add(units(user))
        .saturating_sub(units(idle));
    Ok(busy.saturating_mul(NANOS_PER_UNIT))
}

/// When the machine booted, in seconds since the Unix epoch: `clock` less the time since boot.
fn boot_time(clock: Clock) -> i64 {
    // SAFETY: no arguments; the call only reads the tick count.
    let since_boot_ms = unsafe { GetTickCount64() };
    let since_boot_s = i64::try_from(since_boot_ms / 1000).unwrap_or(i64::MAX);
    (clock.ns() / 1_000_000_000).saturating_sub(since_boot_s)
}

/// The machine's commit charge and limit, in bytes.
fn commit() -> Result<CommitMemory, HostStatsError> {
    let size = std::mem::size_of::<PERFORMANCE_INFORMATION>();
    let cb = u32::try_from(size).unwrap_or(u32::MAX);
    // SAFETY: PERFORMANCE_INFORMATION is plain data, for which all zeroes are valid.
    let mut info: PERFORMANCE_INFORMATION = unsafe { std::mem::zeroed() };
    info.cb = cb;
    // SAFETY: `info` is a live PERFORMANCE_INFORMATION of `cb` bytes.
    if unsafe { K32GetPerformanceInfo(&mut info, cb) } == 0 {
        return Err(system_call("GetPerformanceInfo"));
    }
    let bytes = |pages: usize| {
        u64::try_from(pages)
            .unwrap_or(u64::MAX)
            .saturating_mul(u64::try_from(info.PageSize).unwrap_or(u64::MAX))
    };
    Ok(CommitMemory {
        limit_bytes: bytes(info.CommitLimit),
        total_bytes: bytes(info.CommitTotal),
    })
}

/// The sum of the processes' private working sets, from the process list
/// `NtQuerySystemInformation(SystemProcessInformation)` writes, in a buffer grown until it
/// fits (processes come and go between calls).
fn private_working_set() -> Result<u64, HostStatsError> {
    let mut size = PROCESS_LIST_START;
    loop {
        // u64 elements keep the records 8-byte aligned, as the call wants.
        let mut buffer = vec![0u64; size.div_ceil(8)];
        let capacity = buffer.len().saturating_mul(8);
        let len = u32::try_from(capacity).unwrap_or(u32::MAX);
        let mut needed = 0u32;
        // SAFETY: `buffer` holds `len` writable bytes and outlives the call; `needed` is live.
        let status = unsafe {
            NtQuerySystemInformation(
                SystemProcessInformation,
                buffer.as_mut_ptr().cast(),
                len,
                &mut needed,
            )
        };
        if status == STATUS_INFO_LENGTH_MISMATCH && size < PROCESS_LIST_MAX {
            // Room for the processes started since.
            size = usize::try_from(needed)
                .unwrap_or(PROCESS_LIST_MAX)
                .max(size.saturating_mul(2))
                .min(PROCESS_LIST_MAX);
            continue;
        }
        if status < 0 {
            return Err(HostStatsError::SystemCall {
                call: "NtQuerySystemInformation",
                source: io::Error::other(format!("NTSTATUS {status:#010x}")),
            });
        }
        let written = usize::try_from(needed).unwrap_or(capacity).min(capacity);
        // SAFETY: the first `written` bytes of `buffer` are initialised (u64s, viewed as bytes,
        // which need no alignment) and stay borrowed for the slice's life.
        let list = unsafe { std::slice::from_raw_parts(buffer.as_ptr().cast::<u8>(), written) };
        return Ok(process_list::private_working_set(list)?);
    }
}

/// The last error of a failed call named `call`.
fn system_call(call: &'static str) -> HostStatsError {
    HostStatsError::SystemCall {
        call,
        source: io::Error::last_os_error(),
    }
}
