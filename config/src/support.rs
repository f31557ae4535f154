//! What sergeant does with each KubeletConfiguration v1beta1 field beyond parsing it: act on
//! it, refuse it at start-up, or accept it with a warning. Two entry points: [`screen`] takes
//! the upstream fields sergeant has no typed field for out of a document before it is
//! deserialized, refusing or warning about each that asks for something other than what
//! sergeant does; [`kubelet`] does the same for typed fields sergeant reads but cannot (yet)
//! honour in every value. A refusal is a [`Violation`] (file, line, field, reason); a warning
//! is a [`Notice`], shown in the log and at `/debug/config`.

use serde_yaml::Value;

use crate::duration::Duration;
use crate::eviction::Signal;
use crate::feature_gates;
use crate::kubelet::{
    AllocatableEnforcement, CgroupDriver, CrashLoopBackOff, HairpinMode, KubeletConfiguration,
    ReservedResource,
};
use crate::validate::Violation;
use crate::warning::Notice;

/// What happens to an upstream field set to something other than what sergeant does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Otherwise {
    /// Start-up fails: the setting asks for behaviour an operator relies on.
    Refuse,
    /// Accepted with a warning: upstream itself treats the feature as optional or advisory.
    Warn,
}

/// An upstream field sergeant has no typed field for: its key path, the value that describes
/// what sergeant does (YAML; upstream's default where the two agree), what happens to any
/// other value, and why.
struct Untyped {
    path: &'static str,
    sergeant_does: &'static str,
    otherwise: Otherwise,
    why: &'static str,
}

const fn untyped(
    path: &'static str,
    sergeant_does: &'static str,
    otherwise: Otherwise,
    why: &'static str,
) -> Untyped {
    Untyped {
        path,
        sergeant_does,
        otherwise,
        why,
    }
}

use Otherwise::{Refuse, Warn};

/// Every upstream v1beta1 field (of Kubernetes v1.37.2) sergeant has no typed field for.
const UNTYPED: &[Untyped] = &[
    untyped(
        "enableServer",
        "true",
        Refuse,
        "sergeant always serves the kubelet API; set port to choose where",
    ),
    untyped(
        "httpCheckFrequency",
        "20s",
        Warn,
        "it only paces staticPodURL, which sergeant does not support",
    ),
    untyped(
        "staticPodURL",
        "\"\"",
        Refuse,
        "static pods from a URL are not supported; use staticPodPath",
    ),
    untyped(
        "staticPodURLHeader",
        "{}",
        Refuse,
        "static pods from a URL are not supported; use staticPodPath",
    ),
    untyped(
        "tlsCurvePreferences",
        "[]",
        Warn,
        "the TLS library chooses the key exchange groups; the list is not applied",
    ),
    untyped(
        "imagePullCredentialsVerificationPolicy",
        "NeverVerifyPreloadedImages",
        Refuse,
        "verifying the credentials of preloaded images is not built",
    ),
    untyped(
        "preloadedImagesVerificationAllowlist",
        "[]",
        Refuse,
        "verifying the credentials of preloaded images is not built",
    ),
    untyped(
        "eventRecordQPS",
        "50",
        Warn,
        "events are sent without a client-side rate limit",
    ),
    untyped(
        "eventBurst",
        "100",
        Warn,
        "events are sent without a client-side rate limit",
    ),
    untyped(
        "enableDebuggingHandlers",
        "true",
        Refuse,
        "logs, exec, attach and port-forward are always served",
    ),
    untyped(
        "enableContentionProfiling",
        "false",
        Warn,
        "sergeant has no profiling handlers",
    ),
    untyped(
        "oomScoreAdj",
        "-999",
        Warn,
        "sergeant does not set its own oom_score_adj",
    ),
    untyped(
        "streamingConnectionIdleTimeout",
        "4h",
        Warn,
        "streaming connections are not closed for idleness",
    ),
    untyped(
        "volumeStatsAggPeriod",
        "1m",
        Warn,
        "volume usage is measured when /stats/summary is asked",
    ),
    untyped(
        "kubeletCgroups",
        "\"\"",
        Warn,
        "sergeant stays in the cgroup it was started in",
    ),
    untyped(
        "systemCgroups",
        "\"\"",
        Warn,
        "sergeant does not move system processes into a cgroup",
    ),
    untyped(
        "cpuManagerPolicy",
        "none",
        Refuse,
        "only the none CPU manager policy is built",
    ),
    untyped(
        "cpuManagerPolicyOptions",
        "{}",
        Refuse,
        "only the none CPU manager policy is built",
    ),
    untyped(
        "cpuManagerReconcilePeriod",
        "10s",
        Warn,
        "only the none CPU manager policy is built: nothing to reconcile",
    ),
    untyped(
        "singleProcessOOMKill",
        "true",
        Warn,
        "an OOM kill takes the one process the kernel picks (cgroup v1)",
    ),
    untyped(
        "memoryManagerPolicy",
        "None",
        Refuse,
        "only the None memory manager policy is built",
    ),
    untyped(
        "reservedMemory",
        "[]",
        Refuse,
        "only the None memory manager policy is built",
    ),
    untyped(
        "topologyManagerPolicy",
        "none",
        Refuse,
        "only the none topology manager policy is built",
    ),
    untyped(
        "topologyManagerScope",
        "container",
        Warn,
        "only the none topology manager policy is built",
    ),
    untyped(
        "topologyManagerPolicyOptions",
        "{}",
        Refuse,
        "only the none topology manager policy is built",
    ),
    untyped(
        "qosReserved",
        "{}",
        Refuse,
        "QoS-level memory reservations are not built",
    ),
    untyped(
        "runOnce",
        "false",
        Refuse,
        "sergeant always runs as a daemon",
    ),
    untyped(
        "cpuCFSQuota",
        "true",
        Refuse,
        "CPU limits are always enforced with a CFS quota",
    ),
    untyped(
        "cpuCFSQuotaPeriod",
        "100ms",
        Refuse,
        "the CFS quota period is always 100ms",
    ),
    untyped(
        "nodeStatusMaxImages",
        "50",
        Warn,
        "the node status reports the 50 largest images",
    ),
    untyped(
        "maxOpenFiles",
        "1000000",
        Warn,
        "sergeant keeps the open-file limit it was started with",
    ),
    untyped(
        "contentType",
        "application/json",
        Warn,
        "sergeant speaks JSON to the API server",
    ),
    untyped(
        "mergeDefaultEvictionSettings",
        "false",
        Warn,
        "evictionHard is used as written",
    ),
    untyped(
        "podsPerCore",
        "0",
        Refuse,
        "a per-core pod limit is not built; use maxPods",
    ),
    untyped(
        "enableControllerAttachDetach",
        "true",
        Refuse,
        "sergeant attaches no volumes: the attach/detach controller must",
    ),
    untyped(
        "protectKernelDefaults",
        "false",
        Refuse,
        "kernel tunables are not checked at start-up",
    ),
    untyped(
        "makeIPTablesUtilChains",
        "true",
        Warn,
        "sergeant creates no iptables chains; the CNI plugin and kube-proxy own them",
    ),
    untyped(
        "iptablesMasqueradeBit",
        "14",
        Warn,
        "sergeant creates no iptables chains",
    ),
    untyped(
        "iptablesDropBit",
        "15",
        Warn,
        "sergeant creates no iptables chains",
    ),
    untyped(
        "memorySwap",
        "{}",
        Refuse,
        "swap for pods (swapBehavior) is not built: containers get no swap",
    ),
    untyped(
        "memorySwap.swapBehavior",
        "NoSwap",
        Refuse,
        "swap for pods is not built: containers get no swap",
    ),
    untyped(
        "reservedSystemCPUs",
        "\"\"",
        Refuse,
        "reserving CPUs needs the static CPU manager, which is not built",
    ),
    untyped(
        "showHiddenMetricsForVersion",
        "\"\"",
        Warn,
        "sergeant hides no metrics",
    ),
    untyped(
        "systemReservedCgroup",
        "\"\"",
        Refuse,
        "enforcing systemReserved on a cgroup is not built",
    ),
    untyped(
        "kubeReservedCgroup",
        "\"\"",
        Refuse,
        "enforcing kubeReserved on a cgroup is not built",
    ),
    untyped(
        "defaultPodSysctls",
        "[]",
        Refuse,
        "default pod sysctls are not built",
    ),
    untyped(
        "volumePluginDir",
        "/usr/libexec/kubernetes/kubelet-plugins/volume/exec/",
        Warn,
        "FlexVolume plugins are not supported",
    ),
    untyped(
        "kernelMemcgNotification",
        "false",
        Warn,
        "memory pressure is polled, not notified by the kernel",
    ),
    untyped(
        "enableSystemLogHandler",
        "true",
        Warn,
        "the /logs/ handler for node logs is not built",
    ),
    untyped(
        "enableSystemLogQuery",
        "false",
        Warn,
        "node log queries are not built",
    ),
    untyped(
        "shutdownGracePeriodByPodPriority",
        "[]",
        Warn,
        "graceful node shutdown is not built: pods are not stopped ahead of a shutdown",
    ),
    untyped(
        "enableProfilingHandler",
        "true",
        Warn,
        "sergeant has no profiling handlers",
    ),
    untyped(
        "enableDebugFlagsHandler",
        "true",
        Warn,
        "verbosity changes through logging.verbosity and a reload",
    ),
    untyped(
        "memoryThrottlingFactor",
        "0.9",
        Warn,
        "memory QoS (memory.high) is not built",
    ),
    untyped(
        "memoryReservationPolicy",
        "None",
        Refuse,
        "memory reservation policies are not built",
    ),
    untyped(
        "registerWithTaints",
        "[]",
        Refuse,
        "the node registers without taints",
    ),
    untyped(
        "registerNode",
        "true",
        Refuse,
        "sergeant always registers its node in managed mode",
    ),
    untyped("tracing", "null", Warn, "sergeant exports no traces"),
    untyped(
        "localStorageCapacityIsolation",
        "false",
        Warn,
        "ephemeral-storage limits are not enforced yet",
    ),
    untyped(
        "failCgroupV1",
        "false",
        Warn,
        "sergeant runs on cgroup v1 hosts",
    ),
    untyped(
        "userNamespaces",
        "{}",
        Refuse,
        "user namespaces for pods are not built",
    ),
    untyped(
        "userNamespaces.idsPerPod",
        "65536",
        Refuse,
        "user namespaces for pods are not built",
    ),
    untyped(
        "logging.flushFrequency",
        "5s",
        Warn,
        "log lines are written as they come",
    ),
    untyped(
        "logging.vmodule",
        "[]",
        Warn,
        "per-module verbosity is not built; logging.verbosity applies to all",
    ),
    untyped(
        "logging.options",
        "{}",
        Warn,
        "the text and JSON log options are not built",
    ),
];

/// Screens one KubeletConfiguration `document` (parsed YAML) for upstream fields sergeant has
/// no typed field for. Returns the key paths to leave out of the typed parse (each accepted:
/// it asks for what sergeant does, or only earns a warning) and the warnings.
///
/// # Errors
/// The first such field whose value asks for something sergeant refuses to pretend to do.
pub(crate) fn screen(document: &Value) -> Result<(Vec<&'static str>, Vec<Notice>), Violation> {
    let mut accepted = Vec::new();
    let mut notices = Vec::new();
    for field in UNTYPED {
        let Some(value) = lookup(document, field.path) else {
            continue;
        };
        accepted.push(field.path);
        if same(value, field.sergeant_does) || covered(document, field.path) {
            continue;
        }
        let reason = format!(
            "{} is not supported: {} (sergeant behaves as {}: {})",
            shown(value),
            field.why,
            field.path,
            field.sergeant_does
        );
        match field.otherwise {
            Refuse => return Err(Violation::at(field.path, reason)),
            Warn => notices.push(Notice::new(field.path, reason)),
        }
    }
    Ok((accepted, notices))
}

/// Whether the value at `path` is a mapping whose every key is in the table itself (as
/// `memorySwap.swapBehavior` for `memorySwap`): then each of those keys is judged on its own.
fn covered(document: &Value, path: &str) -> bool {
    lookup(document, path)
        .and_then(Value::as_mapping)
        .is_some_and(|mapping| {
            mapping.keys().all(|key| {
                key.as_str().is_some_and(|key| {
                    let child = format!("{path}.{key}");
                    UNTYPED.iter().any(|field| field.path == child)
                })
            })
        })
}

fn lookup<'a>(document: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .try_fold(document, |node, key| node.get(key))
}

/// Whether the file's value means what `sergeant_does` says: equal as YAML, or as durations.
fn same(value: &Value, sergeant_does: &str) -> bool {
    let Ok(expected) = serde_yaml::from_str::<Value>(sergeant_does) else {
        return false;
    };
    if *value == expected {
        return true;
    }
    let duration = |value: &Value| value.as_str().and_then(|s| s.parse::<Duration>().ok());
    matches!((duration(value), duration(&expected)), (Some(a), Some(b)) if a == b)
}

fn shown(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "the value".to_owned())
}

/// With `KubeletCrashLoopBackOffMax` off, upstream refuses
/// `crashLoopBackOff.maxContainerRestartPeriod` and caps the back-off at 5m. A value of 5m (the
/// default) cannot be told from an unset one here and is accepted: it is what the gate off does.
fn crash_loop_back_off_max(config: &KubeletConfiguration) -> Result<(), Violation> {
    let max = config.crash_loop_back_off.max_container_restart_period;
    if config.feature_enabled("KubeletCrashLoopBackOffMax")
        || max == CrashLoopBackOff::default().max_container_restart_period
    {
        return Ok(());
    }
    Err(Violation::at(
        "crashLoopBackOff.maxContainerRestartPeriod",
        format!(
            "must not be set while the feature gate KubeletCrashLoopBackOffMax is off (as \
             upstream): the back-off cap is then 5m0s, not {max}"
        ),
    ))
}

/// Checks the typed fields sergeant reads but cannot honour in every value.
///
/// # Errors
/// The first setting refused: certificate bootstrap or rotation, the systemd cgroup driver,
/// enforcement on reserved cgroups, an unknown or locked feature gate.
pub(crate) fn kubelet(config: &KubeletConfiguration) -> Result<Vec<Notice>, Violation> {
    if config.rotate_certificates {
        return Err(Violation::at(
            "rotateCertificates",
            "client certificate rotation through the certificates API is not built: give the \
             client certificate in the kubeconfig and set rotateCertificates: false"
                .to_owned(),
        ));
    }
    if config.server_tls_bootstrap {
        return Err(Violation::at(
            "serverTLSBootstrap",
            "requesting the serving certificate from the certificates API is not built: set \
             tlsCertFile and tlsPrivateKeyFile (or neither, for a self-signed certificate) and \
             serverTLSBootstrap: false"
                .to_owned(),
        ));
    }
    if config.cgroup_driver == CgroupDriver::Systemd {
        return Err(Violation::at(
            "cgroupDriver",
            "systemd is not supported: sergeant writes the cgroup filesystem itself; use \
             cgroupfs (and SystemdCgroup = false in containerd's runc options)"
                .to_owned(),
        ));
    }
    if let Some(reserved) = config.enforce_node_allocatable.iter().find(|key| {
        !matches!(
            key,
            AllocatableEnforcement::Pods | AllocatableEnforcement::None
        )
    }) {
        return Err(Violation::at(
            "enforceNodeAllocatable",
            format!(
                "{} needs systemReservedCgroup / kubeReservedCgroup, which sergeant does not \
                 support: use pods or none",
                serde_json::to_string(reserved).unwrap_or_default()
            ),
        ));
    }
    let mut notices = feature_gates::check(&config.feature_gates)?;
    crash_loop_back_off_max(config)?;
    let pods_enforced = config
        .enforce_node_allocatable
        .contains(&AllocatableEnforcement::Pods);
    for (reservations, path) in [
        (&config.kube_reserved, "kubeReserved.pid"),
        (&config.system_reserved, "systemReserved.pid"),
    ] {
        if reservations.contains_key(&ReservedResource::Pid) && !pods_enforced {
            notices.push(Notice::new(
                path,
                "is not enforced: enforceNodeAllocatable does not hold \"pods\", so the pods' \
                 cgroup gets no pid limit for it"
                    .to_owned(),
            ));
        }
    }
    for (thresholds, path) in [
        (&config.eviction_hard, "evictionHard"),
        (&config.eviction_soft, "evictionSoft"),
    ] {
        if thresholds.contains_key(&Signal::AllocatableMemoryAvailable) && !config.cgroups_per_qos {
            notices.push(Notice::new(
                &format!("{path}.allocatableMemory.available"),
                "is never met: it is observed from the pods' cgroup (kubepods), which \
                 cgroupsPerQOS: false leaves out; memory.available is observed"
                    .to_owned(),
            ));
        }
    }
    if config.hairpin_mode != HairpinMode::PromiscuousBridge {
        notices.push(Notice::new(
            "hairpinMode",
            "has no effect, as in upstream's kubelet since dockershim: the CNI plugin sets \
             up hairpin traffic"
                .to_owned(),
        ));
    }
    if !config.shutdown_grace_period.is_zero() {
        notices.push(Notice::new(
            "shutdownGracePeriod",
            "graceful node shutdown is not built: pods are not stopped ahead of a node \
             shutdown (upstream also runs on when its shutdown manager cannot start)"
                .to_owned(),
        ));
    }
    Ok(notices)
}
