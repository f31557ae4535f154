//! The `sergeant.dev/v1alpha1` `SergeantConfiguration` document: what only sergeant has (the
//! runtime adapter choice, the supervision policy, container garbage collection), kept out of
//! the upstream document so that one stays exactly upstream's.

use serde::{Deserialize, Serialize};

use crate::duration::Duration;

/// The `apiVersion` a SergeantConfiguration document must carry.
pub const SERGEANT_API_VERSION: &str = "sergeant.dev/v1alpha1";
/// The `kind` of the SergeantConfiguration document.
pub const SERGEANT_KIND: &str = "SergeantConfiguration";

/// sergeant's own settings. The whole document is optional; absent fields take the defaults
/// shown on each field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct SergeantConfiguration {
    /// Always `sergeant.dev/v1alpha1`.
    pub api_version: String,
    /// Always `SergeantConfiguration`.
    pub kind: String,
    /// Which runtime adapter drives containers (cri).
    pub runtime_adapter: RuntimeAdapterKind,
    /// Restart policy of the supervision tree.
    pub supervision: Supervision,
    /// Container restart back-off start (the cap is upstream's
    /// `crashLoopBackOff.maxContainerRestartPeriod`).
    pub crash_loop_back_off: CrashLoopBackOffStart,
    /// Removal of dead containers and sandboxes (upstream has only command-line flags for it).
    pub garbage_collection: GarbageCollection,
}

impl Default for SergeantConfiguration {
    fn default() -> Self {
        SergeantConfiguration {
            api_version: SERGEANT_API_VERSION.to_string(),
            kind: SERGEANT_KIND.to_string(),
            runtime_adapter: RuntimeAdapterKind::Cri,
            supervision: Supervision::default(),
            crash_loop_back_off: CrashLoopBackOffStart::default(),
            garbage_collection: GarbageCollection::default(),
        }
    }
}

/// The runtime adapter behind the runtime port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuntimeAdapterKind {
    /// A CRI runtime (containerd, CRI-O) at `containerRuntimeEndpoint`.
    Cri,
    /// The in-memory runtime for hollow nodes and scale tests.
    Fake,
}

/// The supervisors' restart policy (OTP-style intensity and exponential back-off).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Supervision {
    /// Most restarts of one child within `restartPeriod` before escalating (5).
    pub restart_intensity: u32,
    /// The window `restartIntensity` counts over (60s).
    pub restart_period: Duration,
    /// First delay before a restart (100ms).
    pub backoff_initial: Duration,
    /// Longest delay before a restart (30s).
    pub backoff_max: Duration,
    /// A child running this long has its back-off reset (60s).
    pub backoff_reset_after: Duration,
    /// How long a stopping child may take before it is abandoned (5s).
    pub shutdown_timeout: Duration,
    /// How long a message to a restarting child may wait for it (2s).
    pub delivery_timeout: Duration,
}

impl Default for Supervision {
    fn default() -> Self {
        Supervision {
            restart_intensity: 5,
            restart_period: Duration::from_secs(60),
            backoff_initial: Duration::from_millis(100),
            backoff_max: Duration::from_secs(30),
            backoff_reset_after: Duration::from_secs(60),
            shutdown_timeout: Duration::from_secs(5),
            delivery_timeout: Duration::from_secs(2),
        }
    }
}

/// Where container restart back-off starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct CrashLoopBackOffStart {
    /// Delay before the first restart of a crashed container (10s).
    pub initial_period: Duration,
}

impl Default for CrashLoopBackOffStart {
    fn default() -> Self {
        CrashLoopBackOffStart {
            initial_period: Duration::from_secs(10),
        }
    }
}

/// The container garbage collector's policy: upstream's `--minimum-container-ttl-duration`,
/// `--maximum-dead-containers-per-container` and `--maximum-dead-containers` flags (and its
/// fixed one-minute period), as settings that apply live.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct GarbageCollection {
    /// How often dead containers and sandboxes are collected (1m).
    pub period: Duration,
    /// A dead container younger than this is never collected (0s).
    pub minimum_container_age: Duration,
    /// Dead instances kept per container of a pod that still exists, besides its newest
    /// instance, which is always kept; -1 means no limit (1).
    pub max_dead_per_container: i32,
    /// Dead containers kept on the whole node; -1 means no limit (-1).
    pub max_dead_containers: i32,
}

impl Default for GarbageCollection {
    fn default() -> Self {
        GarbageCollection {
            period: Duration::from_secs(60),
            minimum_container_age: Duration::from_secs(0),
            max_dead_per_container: 1,
            max_dead_containers: -1,
        }
    }
}
