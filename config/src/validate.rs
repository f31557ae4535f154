//! Checks that need a whole parsed document (ranges, relations between fields, relations
//! between the two documents). Each failure names the key path it is about, so the caller can
//! point at the key's line in the file.

use crate::duration::Duration;
use crate::kubelet::{AllocatableEnforcement, KubeletConfiguration, TlsVersion};
use crate::sergeant::SergeantConfiguration;

/// A failed check: the key path it is about and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Violation {
    /// The offending key path, one segment per mapping level.
    pub(crate) path: Vec<String>,
    /// A key path to point at when `path` is not written in the file (its value is a
    /// default); looked up in this document, then in the other.
    pub(crate) related: Option<&'static str>,
    /// Why the value is refused.
    pub(crate) reason: String,
}

impl Violation {
    pub(crate) fn at(path: &str, reason: String) -> Self {
        Violation {
            path: path.split('.').map(str::to_string).collect(),
            related: None,
            reason,
        }
    }

    fn related_to(mut self, key: &'static str) -> Self {
        self.related = Some(key);
        self
    }

    /// The path as shown in errors (`evictionSoft.memory.available`).
    pub(crate) fn field(&self) -> String {
        self.path.join(".")
    }
}

type Check = Result<(), Violation>;

fn require(ok: bool, path: &str, reason: impl FnOnce() -> String) -> Check {
    if ok {
        Ok(())
    } else {
        Err(Violation::at(path, reason()))
    }
}

fn positive_duration(value: Duration, path: &str) -> Check {
    require(!value.is_zero(), path, || {
        "must be longer than 0s".to_string()
    })
}

fn at_least(value: i64, minimum: i64, path: &str) -> Check {
    require(value >= minimum, path, || {
        format!("{value} is out of range: must be {minimum} or more")
    })
}

fn percent(value: i32, path: &str) -> Check {
    require((0..=100).contains(&value), path, || {
        format!("{value} is out of range: must be from 0 to 100")
    })
}

/// Checks a KubeletConfiguration on its own.
pub(crate) fn kubelet(config: &KubeletConfiguration) -> Check {
    require(config.port != 0, "port", || {
        "0 is out of range: must be from 1 to 65535".to_string()
    })?;
    require(config.pod_logs_dir.is_absolute(), "podLogsDir", || {
        format!(
            "{:?} is not an absolute path",
            config.pod_logs_dir.display().to_string()
        )
    })?;
    for (value, path) in [
        (config.sync_frequency, "syncFrequency"),
        (config.file_check_frequency, "fileCheckFrequency"),
        (config.runtime_request_timeout, "runtimeRequestTimeout"),
        (
            config.node_status_update_frequency,
            "nodeStatusUpdateFrequency",
        ),
        (
            config.node_status_report_frequency,
            "nodeStatusReportFrequency",
        ),
    ] {
        positive_duration(value, path)?;
    }
    for (value, minimum, path) in [
        (i64::from(config.max_pods), 1, "maxPods"),
        (config.pod_pids_limit, -1, "podPidsLimit"),
        (
            i64::from(config.node_lease_duration_seconds),
            1,
            "nodeLeaseDurationSeconds",
        ),
        (
            i64::from(config.container_log_max_files),
            2,
            "containerLogMaxFiles",
        ),
        (
            i64::from(config.container_log_max_workers),
            1,
            "containerLogMaxWorkers",
        ),
        (
            i64::from(config.eviction_max_pod_grace_period),
            0,
            "evictionMaxPodGracePeriod",
        ),
        (i64::from(config.registry_pull_qps), 0, "registryPullQPS"),
        (i64::from(config.registry_burst), 0, "registryBurst"),
        (i64::from(config.kube_api_qps), 0, "kubeAPIQPS"),
        (i64::from(config.kube_api_burst), 0, "kubeAPIBurst"),
    ] {
        at_least(value, minimum, path)?;
    }
    image_gc(config)?;
    eviction(config)?;
    image_pulls(config)?;
    shutdown(config)?;
    node_allocatable(config)?;
    pod_cidr(config)?;
    for (i, pattern) in config.allowed_unsafe_sysctls.iter().enumerate() {
        crate::sysctl::SysctlPattern::parse(pattern).map_err(|reason| {
            Violation::at("allowedUnsafeSysctls", format!("entry {}: {reason}", i + 1))
        })?;
    }
    require(
        config.tls_cert_file.is_some() == config.tls_private_key_file.is_some(),
        if config.tls_cert_file.is_some() {
            "tlsCertFile"
        } else {
            "tlsPrivateKeyFile"
        },
        || "tlsCertFile and tlsPrivateKeyFile must be set together".to_string(),
    )?;
    tls_min_version(config)?;
    require(
        config.container_log_max_size.value() > 0,
        "containerLogMaxSize",
        || {
            format!(
                "\"{}\" must be larger than 0",
                config.container_log_max_size
            )
        },
    )?;
    let monitor = config.container_log_monitor_interval;
    require(
        monitor >= Duration::from_secs(3),
        "containerLogMonitorInterval",
        || format!("{monitor} is out of range: must be 3s or more"),
    )?;
    let max_restart = config.crash_loop_back_off.max_container_restart_period;
    require(
        (Duration::from_secs(1)..=Duration::from_secs(300)).contains(&max_restart),
        "crashLoopBackOff.maxContainerRestartPeriod",
        || format!("{max_restart} is out of range: must be from 1s to 5m0s"),
    )?;
    for (reservations, path) in [
        (&config.kube_reserved, "kubeReserved"),
        (&config.system_reserved, "systemReserved"),
    ] {
        if let Some((resource, amount)) = reservations.iter().find(|(_, q)| q.is_negative()) {
            let name = serde_json::to_value(resource)
                .ok()
                .and_then(|value| value.as_str().map(str::to_string))
                .unwrap_or_default();
            return Err(Violation::at(
                &format!("{path}.{name}"),
                format!("\"{amount}\" is negative: a reservation must be zero or more"),
            ));
        }
    }
    Ok(())
}

/// `podCIDR`: one CIDR, or an IPv4 and an IPv6 one separated by a comma (dual stack), as the
/// runtime is handed it (CRI `UpdateRuntimeConfig`).
fn pod_cidr(config: &KubeletConfiguration) -> Check {
    let Some(value) = config.pod_cidr.as_deref().filter(|v| !v.is_empty()) else {
        return Ok(());
    };
    let mut ipv6 = Vec::new();
    for range in value.split(',').map(str::trim) {
        ipv6.push(cidr_family(range).map_err(|reason| {
            Violation::at("podCIDR", format!("{range:?} is not a CIDR: {reason}"))
        })?);
    }
    let dual_stack = matches!(ipv6.as_slice(), [a, b] if a != b);
    require(ipv6.len() == 1 || dual_stack, "podCIDR", || {
        format!("{value:?} must be one CIDR, or an IPv4 and an IPv6 CIDR separated by a comma")
    })
}

/// Why a `podCIDR` range is not a CIDR: the reason after `"<range>" is not a CIDR: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum CidrProblem {
    /// No `/N`.
    #[error("no prefix length (/N)")]
    NoPrefix,
    /// The part before the `/` is not an address.
    #[error("{0:?} is not an IP address")]
    NotAnAddress(String),
    /// The prefix length is not a number up to the address's bits.
    #[error("the prefix length must be 0 to {max}")]
    PrefixLength {
        /// 32 or 128.
        max: u8,
    },
}

/// Whether `range` (`10.244.0.0/24`, `fd00::/64`) is an IPv6 CIDR.
fn cidr_family(range: &str) -> Result<bool, CidrProblem> {
    let (address, prefix) = range.split_once('/').ok_or(CidrProblem::NoPrefix)?;
    let address: std::net::IpAddr = address
        .parse()
        .map_err(|_| CidrProblem::NotAnAddress(address.to_owned()))?;
    let max = if address.is_ipv6() { 128 } else { 32 };
    prefix
        .parse::<u8>()
        .ok()
        .filter(|p| *p <= max)
        .ok_or(CidrProblem::PrefixLength { max })?;
    Ok(address.is_ipv6())
}

fn image_gc(config: &KubeletConfiguration) -> Check {
    let high = config.image_gc_high_threshold_percent;
    let low = config.image_gc_low_threshold_percent;
    percent(high, "imageGCHighThresholdPercent")?;
    percent(low, "imageGCLowThresholdPercent")?;
    require(low < high, "imageGCLowThresholdPercent", || {
        format!("{low} must be lower than imageGCHighThresholdPercent ({high})")
    })
    .map_err(|violation| violation.related_to("imageGCHighThresholdPercent"))?;
    let (max, min) = (config.image_maximum_gc_age, config.image_minimum_gc_age);
    require(max.is_zero() || max > min, "imageMaximumGCAge", || {
        format!("{max} must be 0 (no maximum) or longer than imageMinimumGCAge ({min})")
    })
    .map_err(|violation| violation.related_to("imageMinimumGCAge"))
}

fn eviction(config: &KubeletConfiguration) -> Check {
    match config
        .eviction_soft
        .keys()
        .find(|signal| !config.eviction_soft_grace_period.contains_key(signal))
    {
        Some(signal) => Err(Violation {
            path: vec!["evictionSoft".to_string(), signal.as_str().to_string()],
            related: None,
            reason: format!("has no grace period: add evictionSoftGracePeriod.{signal}"),
        }),
        None => Ok(()),
    }
}

fn image_pulls(config: &KubeletConfiguration) -> Check {
    let Some(parallel) = config.max_parallel_image_pulls else {
        return Ok(());
    };
    at_least(i64::from(parallel), 1, "maxParallelImagePulls")?;
    require(
        !(config.serialize_image_pulls && parallel > 1),
        "maxParallelImagePulls",
        || format!("{parallel} parallel pulls need serializeImagePulls: false"),
    )
}

fn shutdown(config: &KubeletConfiguration) -> Check {
    let total = config.shutdown_grace_period;
    let critical = config.shutdown_grace_period_critical_pods;
    require(critical <= total, "shutdownGracePeriodCriticalPods", || {
        format!("{critical} must not exceed shutdownGracePeriod ({total})")
    })
}

fn tls_min_version(config: &KubeletConfiguration) -> Check {
    match config.tls_min_version {
        Some(version @ (TlsVersion::VersionTLS10 | TlsVersion::VersionTLS11)) => {
            Err(Violation::at(
                "tlsMinVersion",
                format!(
                    "{version:?} cannot be served: sergeant's TLS library (rustls) speaks TLS 1.2 \
                     and 1.3 only; use VersionTLS12 or VersionTLS13"
                ),
            ))
        }
        _ => Ok(()),
    }
}

fn node_allocatable(config: &KubeletConfiguration) -> Check {
    let keys = &config.enforce_node_allocatable;
    require(
        !(keys.contains(&AllocatableEnforcement::None) && keys.len() > 1),
        "enforceNodeAllocatable",
        || "\"none\" cannot be combined with other values".to_string(),
    )?;
    let enforces = keys.iter().any(|k| *k != AllocatableEnforcement::None);
    require(
        config.cgroups_per_qos || !enforces,
        "enforceNodeAllocatable",
        || {
            "is only supported with cgroupsPerQOS: true (there is no kubepods cgroup to enforce it on); use [none]".to_string()
        },
    )
}

/// Checks a SergeantConfiguration, including against the KubeletConfiguration it goes with.
pub(crate) fn sergeant(config: &SergeantConfiguration, kubelet: &KubeletConfiguration) -> Check {
    let supervision = &config.supervision;
    for (value, path) in [
        (supervision.restart_period, "supervision.restartPeriod"),
        (supervision.backoff_initial, "supervision.backoffInitial"),
        (supervision.shutdown_timeout, "supervision.shutdownTimeout"),
        (supervision.delivery_timeout, "supervision.deliveryTimeout"),
        (
            config.crash_loop_back_off.initial_period,
            "crashLoopBackOff.initialPeriod",
        ),
        (config.garbage_collection.period, "garbageCollection.period"),
    ] {
        positive_duration(value, path)?;
    }
    let gc = &config.garbage_collection;
    for (value, path) in [
        (
            gc.max_dead_per_container,
            "garbageCollection.maxDeadPerContainer",
        ),
        (
            gc.max_dead_containers,
            "garbageCollection.maxDeadContainers",
        ),
    ] {
        // -1 is "no limit", as upstream's flags.
        at_least(i64::from(value), -1, path)?;
    }
    let (initial, max) = (supervision.backoff_initial, supervision.backoff_max);
    require(max >= initial, "supervision.backoffMax", || {
        format!("{max} must not be shorter than supervision.backoffInitial ({initial})")
    })?;
    let start = config.crash_loop_back_off.initial_period;
    let cap = kubelet.crash_loop_back_off.max_container_restart_period;
    require(start <= cap, "crashLoopBackOff.initialPeriod", || {
        format!(
            "{start} (SergeantConfiguration) must not exceed crashLoopBackOff.maxContainerRestartPeriod ({cap}) of KubeletConfiguration"
        )
    })
    .map_err(|violation| violation.related_to("crashLoopBackOff.maxContainerRestartPeriod"))
}
