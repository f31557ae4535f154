//! A container's cgroup settings (cpu shares and quota, memory limit) and OOM score, mapped
//! from its requests and limits the way the upstream kubelet maps them.

use k8s_cri::v1::LinuxContainerResources;
use k8s_openapi::api::core::v1::Pod;

use super::qos::QosClass;
use super::quantity::ContainerAmounts;

/// The CFS period every quota is expressed against, in microseconds.
const CPU_PERIOD_US: i64 = 100_000;
/// The smallest quota the kernel accepts, in microseconds.
const MIN_CPU_QUOTA_US: i64 = 1_000;
/// Shares of a container that requests no cpu (the kernel's minimum).
const MIN_CPU_SHARES: i64 = 2;
/// The kernel's maximum cpu shares.
const MAX_CPU_SHARES: i64 = 262_144;
/// OOM score of Guaranteed pods and node-critical pods: killed last.
const GUARANTEED_OOM_SCORE_ADJ: i64 = -997;
/// OOM score of BestEffort pods: killed first.
const BEST_EFFORT_OOM_SCORE_ADJ: i64 = 1000;
/// The priority class that makes a pod node-critical.
const NODE_CRITICAL_PRIORITY_CLASS: &str = "system-node-critical";

/// The Linux resources of one container of `pod`, whose class is `qos`.
pub fn linux_resources(
    pod: &Pod,
    qos: QosClass,
    amounts: &ContainerAmounts,
    memory_capacity_bytes: u64,
) -> LinuxContainerResources {
    let (cpu_period, cpu_quota) = match amounts.limits.cpu_milli {
        Some(milli) => (CPU_PERIOD_US, cpu_quota(milli)),
        None => (0, 0),
    };
    LinuxContainerResources {
        cpu_period,
        cpu_quota,
        cpu_shares: cpu_shares(amounts.requests.cpu_milli.unwrap_or(0)),
        memory_limit_in_bytes: amounts.limits.memory_bytes.unwrap_or(0),
        oom_score_adj: oom_score_adj(pod, qos, amounts, memory_capacity_bytes),
        ..Default::default()
    }
}

/// Millicores requested → relative cpu weight (1024 per core).
fn cpu_shares(milli: i64) -> i64 {
    (milli.saturating_mul(1024) / 1000).clamp(MIN_CPU_SHARES, MAX_CPU_SHARES)
}

/// Millicores allowed → microseconds per period.
fn cpu_quota(milli: i64) -> i64 {
    (milli.saturating_mul(CPU_PERIOD_US) / 1000).max(MIN_CPU_QUOTA_US)
}

/// Guaranteed (and node-critical) pods get -997, BestEffort 1000, and Burstable containers a
/// score that falls as their memory request grows towards the node's memory, within [2, 999].
fn oom_score_adj(pod: &Pod, qos: QosClass, amounts: &ContainerAmounts, capacity: u64) -> i64 {
    let node_critical = pod
        .spec
        .as_ref()
        .and_then(|s| s.priority_class_name.as_deref())
        == Some(NODE_CRITICAL_PRIORITY_CLASS);
    if node_critical {
        return GUARANTEED_OOM_SCORE_ADJ;
    }
    match qos {
        QosClass::Guaranteed => GUARANTEED_OOM_SCORE_ADJ,
        QosClass::BestEffort => BEST_EFFORT_OOM_SCORE_ADJ,
        QosClass::Burstable => {
            let request = i128::from(amounts.requests.memory_bytes.unwrap_or(0));
            let capacity = i128::from(capacity.max(1));
            let score = 1000 - (1000 * request) / capacity;
            i64::try_from(score.clamp(2, 999)).unwrap_or(999)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::quantity::Amounts;
    use crate::testing::pod_with;

    const GIB: i64 = 1 << 30;

    fn amounts(
        request: (Option<i64>, Option<i64>),
        limit: (Option<i64>, Option<i64>),
    ) -> ContainerAmounts {
        ContainerAmounts {
            requests: Amounts {
                cpu_milli: request.0,
                memory_bytes: request.1,
            },
            limits: Amounts {
                cpu_milli: limit.0,
                memory_bytes: limit.1,
            },
        }
    }

    #[test]
    fn cpu_maps_to_shares_and_quota() {
        let pod = pod_with(vec![], vec![]);
        let r = linux_resources(
            &pod,
            QosClass::Burstable,
            &amounts((Some(100), None), (Some(200), Some(64 << 20))),
            16 << 30,
        );
        assert_eq!(
            (
                r.cpu_shares,
                r.cpu_period,
                r.cpu_quota,
                r.memory_limit_in_bytes
            ),
            (102, 100_000, 20_000, 64 << 20)
        );
        let none = linux_resources(
            &pod,
            QosClass::BestEffort,
            &ContainerAmounts::default(),
            16 << 30,
        );
        assert_eq!(
            (
                none.cpu_shares,
                none.cpu_period,
                none.cpu_quota,
                none.memory_limit_in_bytes
            ),
            (2, 0, 0, 0)
        );
        assert_eq!(cpu_shares(1), 2);
        assert_eq!(cpu_shares(1_000_000), MAX_CPU_SHARES);
        assert_eq!(cpu_quota(1), 1000);
        assert_eq!(cpu_quota(1500), 150_000);
    }

    #[test]
    fn oom_score_follows_qos_and_memory_request() {
        let mut pod = pod_with(vec![], vec![]);
        let capacity = 16 * GIB as u64;
        let score = |pod: &Pod, qos, request: Option<i64>| {
            linux_resources(pod, qos, &amounts((None, request), (None, None)), capacity)
                .oom_score_adj
        };
        assert_eq!(score(&pod, QosClass::Guaranteed, None), -997);
        assert_eq!(score(&pod, QosClass::BestEffort, None), 1000);
        assert_eq!(score(&pod, QosClass::Burstable, Some(4 * GIB)), 750);
        assert_eq!(score(&pod, QosClass::Burstable, None), 999);
        assert_eq!(score(&pod, QosClass::Burstable, Some(16 * GIB)), 2);
        assert_eq!(score(&pod, QosClass::Burstable, Some(64 * GIB)), 2);
        pod.spec.as_mut().unwrap().priority_class_name = Some(NODE_CRITICAL_PRIORITY_CLASS.into());
        assert_eq!(score(&pod, QosClass::BestEffort, None), -997);
    }
}
