//! Diffing two configurations into "what changed, and who can apply it live". The config
//! watcher sends each live change to its owner and refuses (or asks for a restart on) the rest.
//! Fields are compared through their serialized form and classified by one table, so a new
//! field needs no new comparison code: unlisted fields simply require a restart.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::node::NodeConfig;

/// The actor that applies a live change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Owner {
    /// Eviction thresholds and timings.
    EvictionManager,
    /// Admission limits.
    PodManager,
    /// Log verbosity.
    Logging,
    /// Runtime endpoints, timeouts and the adapter choice (hot swap).
    RuntimeAdapter,
    /// Node status and lease timings.
    NodeStatus,
    /// Image garbage collection.
    ImageGc,
    /// Garbage collection of dead containers, sandboxes and pod log directories.
    ContainerGc,
    /// Pod resync period and restart back-off, read by every pod actor at each sync.
    PodWorkers,
    /// The static pod directory and how often it is read.
    StaticPodSource,
    /// Container log rotation.
    ContainerLogManager,
}

impl std::fmt::Display for Owner {
    /// The owner's name as `/debug/config` shows it (`pod-workers`).
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(match self {
            Owner::EvictionManager => "eviction-manager",
            Owner::PodManager => "pod-manager",
            Owner::Logging => "logging",
            Owner::RuntimeAdapter => "runtime-adapter",
            Owner::NodeStatus => "node-status",
            Owner::ImageGc => "image-gc",
            Owner::ContainerGc => "container-gc",
            Owner::PodWorkers => "pod-workers",
            Owner::StaticPodSource => "static-pod-source",
            Owner::ContainerLogManager => "container-log-manager",
        })
    }
}

/// How a changed field takes effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Apply {
    /// The owner applies it without restarting the agent.
    Live(Owner),
    /// The agent must restart for it to take effect.
    RestartRequired,
}

/// One changed field and how it takes effect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldChange {
    /// The camelCase path: a KubeletConfiguration field ("evictionHard", "logging.verbosity"),
    /// or "sergeant.…" / "commandLine.…".
    pub field: String,
    /// Who applies it, or that a restart is needed.
    pub apply: Apply,
}

/// Every field that differs between two configurations.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ConfigDiff {
    /// The changes, sorted by field path.
    pub changes: Vec<FieldChange>,
}

impl ConfigDiff {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Whether any change needs an agent restart.
    pub fn requires_restart(&self) -> bool {
        self.changes
            .iter()
            .any(|change| change.apply == Apply::RestartRequired)
    }
}

/// Fields that apply live, and their owners. Everything else requires a restart. A path that
/// is a prefix of listed paths (`logging`) is compared field by field below it.
const LIVE: &[(&str, Owner)] = &[
    ("staticPodPath", Owner::StaticPodSource),
    ("syncFrequency", Owner::PodWorkers),
    ("fileCheckFrequency", Owner::StaticPodSource),
    ("crashLoopBackOff", Owner::PodWorkers),
    ("sergeant.crashLoopBackOff", Owner::PodWorkers),
    ("sergeant.garbageCollection", Owner::ContainerGc),
    ("containerRuntimeEndpoint", Owner::RuntimeAdapter),
    ("imageServiceEndpoint", Owner::RuntimeAdapter),
    ("runtimeRequestTimeout", Owner::RuntimeAdapter),
    ("sergeant.runtimeAdapter", Owner::RuntimeAdapter),
    // Handed to the runtime again (CRI UpdateRuntimeConfig) unless the Node names its own.
    ("podCIDR", Owner::RuntimeAdapter),
    ("maxPods", Owner::PodManager),
    // Read by admission (allocatable memory) at every pod it admits.
    ("evictionHard", Owner::PodManager),
    ("evictionSoft", Owner::EvictionManager),
    ("evictionSoftGracePeriod", Owner::EvictionManager),
    ("evictionMinimumReclaim", Owner::EvictionManager),
    ("evictionPressureTransitionPeriod", Owner::EvictionManager),
    ("evictionMaxPodGracePeriod", Owner::EvictionManager),
    ("imageGCHighThresholdPercent", Owner::ImageGc),
    ("imageGCLowThresholdPercent", Owner::ImageGc),
    ("imageMinimumGCAge", Owner::ImageGc),
    ("imageMaximumGCAge", Owner::ImageGc),
    ("nodeStatusUpdateFrequency", Owner::NodeStatus),
    ("nodeStatusReportFrequency", Owner::NodeStatus),
    ("nodeLeaseDurationSeconds", Owner::NodeStatus),
    ("logging.verbosity", Owner::Logging),
    ("containerLogMaxSize", Owner::ContainerLogManager),
    ("containerLogMaxFiles", Owner::ContainerLogManager),
    ("containerLogMonitorInterval", Owner::ContainerLogManager),
    ("containerLogMaxWorkers", Owner::ContainerLogManager),
];

/// What changed from `old` to `new`, each change classified as live (with its owner) or
/// restart-required.
pub fn diff(old: &NodeConfig, new: &NodeConfig) -> ConfigDiff {
    let mut changes = Vec::new();
    match (serde_json::to_value(old), serde_json::to_value(new)) {
        (Ok(Value::Object(old)), Ok(Value::Object(new))) => {
            for (section, prefix) in [
                ("kubelet", ""),
                ("sergeant", "sergeant"),
                ("commandLine", "commandLine"),
            ] {
                compare(prefix, old.get(section), new.get(section), &mut changes);
            }
        }
        // Unreachable for these types; if it ever happens, be safe: demand a restart.
        _ => {
            if old != new {
                changes.push(FieldChange {
                    field: "*".to_string(),
                    apply: Apply::RestartRequired,
                });
            }
        }
    }
    ConfigDiff { changes }
}

/// Compares the fields of two objects under `prefix`, descending where the table is finer.
fn compare(prefix: &str, old: Option<&Value>, new: Option<&Value>, out: &mut Vec<FieldChange>) {
    let empty = Map::new();
    let old = old.and_then(Value::as_object).unwrap_or(&empty);
    let new = new.and_then(Value::as_object).unwrap_or(&empty);
    let keys = old
        .keys()
        .chain(new.keys().filter(|key| !old.contains_key(*key)));
    for key in keys {
        let (before, after) = (old.get(key), new.get(key));
        if before == after {
            continue;
        }
        let field = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        let finer = LIVE.iter().any(|(path, _)| {
            path.strip_prefix(field.as_str())
                .is_some_and(|rest| rest.starts_with('.'))
        });
        if finer {
            compare(&field, before, after, out);
        } else {
            let apply = LIVE
                .iter()
                .find(|(path, _)| *path == field)
                .map_or(Apply::RestartRequired, |(_, owner)| Apply::Live(*owner));
            out.push(FieldChange { field, apply });
        }
    }
}
