//! A container's cgroup settings (cpu shares and quota, memory limit) and OOM score, mapped
//! from its requests and limits the way the upstream kubelet maps them.

use k8s_cri::v1::LinuxContainerResources;
use k8s_openapi::api::core::v1::{Container, Pod};

use super::pod_resources::{amount, milli, pod_level, units};
use super::qos::{qos_class, QosClass};
use super::quantity::{container_amounts, Amounts, ContainerAmounts};
use crate::context::SpecError;

/// The CFS period every quota is expressed against, in microseconds.
pub(super) const CPU_PERIOD_US: i64 = 100_000;
/// The smallest quota the kernel accepts, in microseconds.
const MIN_CPU_QUOTA_US: i64 = 1_000;
/// Shares of a container that requests no cpu (the kernel's minimum).
pub(super) const MIN_CPU_SHARES: i64 = 2;
/// The kernel's maximum cpu shares.
const MAX_CPU_SHARES: i64 = 262_144;
/// OOM score of Guaranteed pods and node-critical pods: killed last.
const GUARANTEED_OOM_SCORE_ADJ: i64 = -997;
/// The lowest score of a Burstable container: a Guaranteed container using all of the node's
/// memory scores 1000 - 997 = 3 in the kernel, and a Burstable one must not score below it.
const BURSTABLE_MIN_OOM_SCORE_ADJ: i128 = 1000 + GUARANTEED_OOM_SCORE_ADJ as i128;
/// OOM score of BestEffort pods: killed first.
const BEST_EFFORT_OOM_SCORE_ADJ: i64 = 1000;
/// The priority class that makes a pod node-critical.
const NODE_CRITICAL_PRIORITY_CLASS: &str = "system-node-critical";

/// The Linux resources `container` of `pod` is created with, and resized to: its own
/// requests and limits, where it sets no cpu or memory limit the pod-level limit
/// (PodLevelResources), and a cpu request defaulting to the cpu limit, as upstream.
/// `pod_name` and `field` (`spec.containers[0]`) name the container in errors.
///
/// # Errors
///
/// [`SpecError::Field`] when a quantity of the container does not parse.
pub fn container_resources(
    pod: &Pod,
    pod_name: &str,
    field: &str,
    container: &Container,
    memory_capacity_bytes: u64,
) -> Result<LinuxContainerResources, SpecError> {
    let amounts = with_pod_limits(pod, container_amounts(pod_name, field, container)?);
    Ok(linux_resources(
        pod,
        qos_class(pod),
        &amounts,
        memory_capacity_bytes,
    ))
}

/// `amounts` of a container of `pod` with the pod-level cpu and memory limits in place of the
/// limits it does not set, and the cpu request defaulting to the resulting cpu limit.
fn with_pod_limits(pod: &Pod, amounts: ContainerAmounts) -> ContainerAmounts {
    let Some(limits) = pod_level(pod).map(|r| r.limits.as_ref()) else {
        return amounts;
    };
    let pod_cpu = amount(limits, "cpu").map(milli).filter(|m| *m > 0);
    let pod_memory = amount(limits, "memory").map(units).filter(|b| *b > 0);
    let cpu_limit = amounts.limits.cpu_milli.or(pod_cpu);
    ContainerAmounts {
        requests: Amounts {
            cpu_milli: amounts.requests.cpu_milli.or(cpu_limit),
            memory_bytes: amounts.requests.memory_bytes,
        },
        limits: Amounts {
            cpu_milli: cpu_limit,
            memory_bytes: amounts.limits.memory_bytes.or(pod_memory),
        },
    }
}

/// The Linux resources of one container of `pod`, whose class is `qos`.
fn linux_resources(
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
pub(super) fn cpu_shares(milli: i64) -> i64 {
    (milli.saturating_mul(1024) / 1000).clamp(MIN_CPU_SHARES, MAX_CPU_SHARES)
}

/// Millicores allowed → microseconds per period.
pub(super) fn cpu_quota(milli: i64) -> i64 {
    (milli.saturating_mul(CPU_PERIOD_US) / 1000).max(MIN_CPU_QUOTA_US)
}

/// Guaranteed (and node-critical) pods get -997, BestEffort 1000, and Burstable containers a
/// score that falls as their memory request grows towards the node's memory, within [3, 999]
/// as upstream: above a Guaranteed container's effective score (1000 - 997) and below
/// BestEffort's.
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
            i64::try_from(score.clamp(BURSTABLE_MIN_OOM_SCORE_ADJ, 999)).unwrap_or(999)
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
        assert_eq!(score(&pod, QosClass::Burstable, Some(16 * GIB)), 3);
        assert_eq!(score(&pod, QosClass::Burstable, Some(64 * GIB)), 3);
        pod.spec.as_mut().unwrap().priority_class_name = Some(NODE_CRITICAL_PRIORITY_CLASS.into());
        assert_eq!(score(&pod, QosClass::BestEffort, None), -997);
    }

    #[test]
    fn containers_without_limits_take_the_pod_level_limits() {
        use crate::testing::{resources, with_pod_resources};
        let pod = with_pod_resources(
            pod_with(
                vec![
                    resources("bare", &[], &[]),
                    resources(
                        "own",
                        &[("cpu", "100m")],
                        &[("cpu", "200m"), ("memory", "64Mi")],
                    ),
                ],
                vec![],
            ),
            &[("cpu", "1"), ("memory", "1Gi")],
            &[("cpu", "1"), ("memory", "1Gi")],
        );
        let spec = pod.spec.as_ref().unwrap();
        let of = |i: usize| {
            container_resources(
                &pod,
                "ns/web",
                "spec.containers[i]",
                &spec.containers[i],
                16 << 30,
            )
            .unwrap()
        };
        let bare = of(0);
        assert_eq!(
            (bare.cpu_quota, bare.cpu_shares, bare.memory_limit_in_bytes),
            (100_000, 1024, 1 << 30),
            "the pod's limits, and the cpu request defaulting to the cpu limit"
        );
        let own = of(1);
        assert_eq!(
            (own.cpu_quota, own.cpu_shares, own.memory_limit_in_bytes),
            (20_000, 102, 64 << 20)
        );
        assert_eq!(
            bare.oom_score_adj, -997,
            "a Guaranteed pod by its pod-level resources"
        );
        let without = pod_with(vec![resources("bare", &[], &[])], vec![]);
        let none = container_resources(
            &without,
            "ns/web",
            "spec.containers[0]",
            &without.spec.as_ref().unwrap().containers[0],
            16 << 30,
        )
        .unwrap();
        assert_eq!((none.cpu_quota, none.memory_limit_in_bytes), (0, 0));
    }
}
