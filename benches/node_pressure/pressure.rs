//! What each scenario puts under pressure and how: the threshold, set from what is available
//! when the scenario starts; the agents' configuration lines, the same for both; the greedy
//! pod; and the signal as the benchmark reads it to see the threshold crossed.

use std::path::Path;
use std::time::Duration;

use sergeant_host::filesystem;
use sergeant_host::stats::{memory, Clock};

use crate::common::node::SHELL;
use crate::isolation::Isolation;
use crate::loop_fs::LoopFs;
use crate::managed_agent::Setup;

/// A mebibyte.
pub const MI: u64 = 1024 * 1024;
/// The size of the disk scenario's root filesystem.
pub const DISK_MIB: u64 = 256;
/// The `nodefs.available` threshold lies this far below what the new filesystem has available.
pub const FILL_MARGIN_MIB: u64 = 128;
/// What the filler writes: past the threshold by [`FILL_MIB`] - [`FILL_MARGIN_MIB`] MiB.
pub const FILL_MIB: u64 = 160;
/// The `memory.available` threshold lies this far below the machine's when the agent starts:
/// room for the other work of a shared machine, whose working set moves by a GiB or so.
pub const MEMORY_MARGIN_MIB: u64 = 2048;
/// What the hog holds, in 1 GiB buffers: past the threshold by some 2 GiB.
pub const HOG_GIB: u64 = 4;
/// How long the pressure condition stays after the pressure was last seen.
pub const TRANSITION: Duration = Duration::from_secs(15);
/// cAdvisor's per-container housekeeping interval in the upstream kubelet, pinned at its
/// default (cAdvisor may stretch it to 15 s for containers whose stats do not change; the
/// kubelet fixes that), and sergeant's fixed sampling period.
pub const HOUSEKEEPING: &str = "10s";
/// What both agents run with besides their isolation, thresholds and transition period: node
/// status computed every 10 s and posted unchanged every 5 min (upstream's defaults), image GC
/// that never starts (a high threshold of 100 %), so that no image is removed under either.
/// `localStorageCapacityIsolation` stays at each agent's own: sergeant has none (its value of
/// the field is `false`); upstream's `true` adds its per-pod ephemeral-storage check (no pod
/// here sets a limit), and upstream cannot go without it on containerd: with `false` its
/// cAdvisor collects no filesystem stats and its eviction manager fails every round ("failed
/// to get HasDedicatedImageFs").
pub const COMMON_CONFIG: &str = "nodeStatusUpdateFrequency: 10s\nnodeStatusReportFrequency: 5m\n\
    imageGCHighThresholdPercent: 100\nimageGCLowThresholdPercent: 99\n";

/// A resource the benchmark puts under pressure.
#[derive(Clone, Copy)]
pub enum Pressure {
    /// `nodefs.available`, the agent's root filesystem.
    Disk,
    /// `memory.available`, the machine's.
    Memory,
}

impl Pressure {
    /// Both, in the order a round runs them.
    pub const ALL: [Pressure; 2] = [Pressure::Disk, Pressure::Memory];

    /// The scenario's name in node names, results and logs.
    pub fn name(self) -> &'static str {
        match self {
            Pressure::Disk => "disk",
            Pressure::Memory => "memory",
        }
    }

    /// The Node condition it sets.
    pub fn condition(self) -> &'static str {
        match self {
            Pressure::Disk => "DiskPressure",
            Pressure::Memory => "MemoryPressure",
        }
    }
}

/// `memory.available` as the kubelet computes it (`MemTotal` less the root memory cgroup's
/// working set), read the way sergeant's stats provider reads it (0 when it cannot be read).
fn memory_available() -> u64 {
    memory::read(
        Path::new("/proc"),
        Path::new(memory::CGROUP_ROOT),
        Clock::read(),
    )
    .ok()
    .and_then(|m| m.available_bytes)
    .unwrap_or(0)
}

/// Bytes available to unprivileged users on the filesystem of `path` (statvfs), as the kubelet
/// counts `nodefs.available` (0 when it cannot be read).
fn fs_available(path: &Path) -> u64 {
    filesystem::space(path).map_or(0, |s| s.available_bytes)
}

/// The signal's available bytes now: `fs`'s when the scenario has one, the memory's otherwise.
fn available(fs: Option<&LoopFs>) -> u64 {
    fs.map_or_else(memory_available, |fs| fs_available(fs.path()))
}

/// What a scenario sets up before its agent starts: the threshold, the root filesystem, the
/// greedy pod.
pub struct Prepared {
    /// The resource under pressure.
    pub pressure: Pressure,
    /// The threshold in MiB: the signal is below it when fewer bytes are available.
    pub threshold_mib: u64,
    /// The disk scenario's root filesystem.
    pub fs: Option<LoopFs>,
}

impl Prepared {
    /// Makes the disk scenario's filesystem, and sets the threshold from what is available now.
    pub fn new(pressure: Pressure) -> Result<Self, String> {
        let (fs, margin) = match pressure {
            Pressure::Disk => (Some(LoopFs::mount(DISK_MIB * MI)?), FILL_MARGIN_MIB),
            Pressure::Memory => (None, MEMORY_MARGIN_MIB),
        };
        let available = available(fs.as_ref());
        Ok(Self {
            pressure,
            threshold_mib: (available / MI).saturating_sub(margin),
            fs,
        })
    }

    /// The signal's available bytes now, as the benchmark reads them.
    pub fn available(&self) -> u64 {
        available(self.fs.as_ref())
    }

    /// Whether the signal is below the threshold now.
    pub fn below(&self) -> bool {
        self.available() < self.threshold_mib * MI
    }

    /// The hard thresholds: upstream's defaults' signals, each set explicitly (so neither
    /// agent fills in defaults of its own), this scenario's at its threshold and the others
    /// where the shared test machine meets none of them.
    pub fn eviction_hard(&self) -> String {
        let (memory, nodefs) = match self.pressure {
            Pressure::Disk => ("100Mi".to_owned(), format!("{}Mi", self.threshold_mib)),
            Pressure::Memory => (format!("{}Mi", self.threshold_mib), "512Mi".to_owned()),
        };
        format!(
            "evictionHard:\n  memory.available: {memory}\n  nodefs.available: {nodefs}\n  \
             nodefs.inodesFree: 5%\n  imagefs.available: 512Mi\n  imagefs.inodesFree: 5%\n"
        )
    }

    /// The agent's setup: `isolation`'s layout, the common lines, the thresholds, the root.
    pub fn setup(&self, isolation: &Isolation) -> Setup {
        Setup {
            kubelet: format!(
                "{}{COMMON_CONFIG}evictionPressureTransitionPeriod: {}s\n{}",
                isolation.layout_config(),
                TRANSITION.as_secs(),
                self.eviction_hard()
            ),
            root_dir: self.fs.as_ref().map(|fs| fs.path().to_owned()),
            upstream_flags: vec![format!("--housekeeping-interval={HOUSEKEEPING}")],
        }
    }

    /// The greedy pod's container: it writes past the threshold into its emptyDir, or holds
    /// memory past it, and sleeps.
    pub fn greedy_container(&self) -> String {
        match self.pressure {
            Pressure::Disk => writer(FILL_MIB * MI),
            Pressure::Memory => format!(
                "  containers:\n  - name: main\n    image: {SHELL}\n    command: [\"sh\", \"-c\", \
                 \"for i in $(seq {HOG_GIB}); do dd if=/dev/zero bs=1073741824 count=1 2>/dev/null \
                 | sleep 3600 & done; wait\"]\n"
            ),
        }
    }
}

/// A pod spec whose container writes `bytes` of zeros into its emptyDir and sleeps.
pub fn writer(bytes: u64) -> String {
    format!(
        "  containers:\n  - name: main\n    image: {SHELL}\n    command: [\"sh\", \"-c\", \
         \"head -c {bytes} /dev/zero > /data/fill; sleep 3600\"]\n    volumeMounts:\n    \
         - {{name: data, mountPath: /data}}\n  volumes:\n  - {{name: data, emptyDir: {{}}}}\n"
    )
}
