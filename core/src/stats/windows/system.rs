//! The system containers upstream's Windows kubelet lists in the summary's node section:
//! `windows-global-commit-memory`, the commit charge of the whole machine against its commit
//! limit (physical memory plus page files), which is what the `memory.available` eviction
//! signal observes on Windows; and `pods`, the sum of the pods' CPU and memory (Windows has no
//! cgroup holding them all).
//!
//! Entry points: [`commit_memory`], [`pods`].

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::stats::summary::{ContainerStats, CpuStats, MemoryStats, PodStats};

/// The name upstream gives the machine's commit charge among the system containers.
pub const GLOBAL_COMMIT_MEMORY: &str = "windows-global-commit-memory";

/// The name upstream gives the pods' system container.
pub const PODS: &str = "pods";

/// The machine's commit charge and limit, in bytes (Windows' `GetPerformanceInfo`: commit
/// total and commit limit, each in pages, times the page size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommitMemory {
    /// The commit limit: what can be committed without growing the page files.
    pub limit_bytes: u64,
    /// What is committed now.
    pub total_bytes: u64,
}

impl CommitMemory {
    /// What can still be committed: the limit less what is committed.
    #[must_use]
    pub fn available_bytes(self) -> u64 {
        self.limit_bytes.saturating_sub(self.total_bytes)
    }
}

/// The `windows-global-commit-memory` system container read at `time`: memory only, the
/// commit charge as usage and what can still be committed as available.
#[must_use]
pub fn commit_memory(commit: CommitMemory, time: Time) -> ContainerStats {
    ContainerStats {
        name: GLOBAL_COMMIT_MEMORY.to_owned(),
        start_time: time.clone(),
        cpu: None,
        memory: Some(MemoryStats {
            time,
            available_bytes: Some(commit.available_bytes()),
            usage_bytes: Some(commit.total_bytes),
            working_set_bytes: None,
            rss_bytes: None,
            page_faults: None,
            major_page_faults: None,
        }),
        rootfs: None,
        logs: None,
    }
}

/// The `pods` system container at `time`: the sums of the pods' CPU and memory; a sum no pod
/// contributes to, or that is 0, is left out, as upstream sets only those that are not.
#[must_use]
pub fn pods(pods: &[PodStats], time: Time) -> ContainerStats {
    let sum = |pick: &dyn Fn(&PodStats) -> Option<u64>| {
        Some(pods.iter().filter_map(pick).fold(0, u64::saturating_add)).filter(|v| *v > 0)
    };
    ContainerStats {
        name: PODS.to_owned(),
        start_time: time.clone(),
        cpu: Some(CpuStats {
            time: time.clone(),
            usage_nano_cores: sum(&|p| p.cpu.as_ref()?.usage_nano_cores),
            usage_core_nano_seconds: sum(&|p| p.cpu.as_ref()?.usage_core_nano_seconds),
        }),
        memory: Some(MemoryStats {
            time,
            available_bytes: sum(&|p| p.memory.as_ref()?.available_bytes),
            usage_bytes: sum(&|p| p.memory.as_ref()?.usage_bytes),
            working_set_bytes: sum(&|p| p.memory.as_ref()?.working_set_bytes),
            rss_bytes: None,
            page_faults: None,
            major_page_faults: None,
        }),
        rootfs: None,
        logs: None,
    }
}
