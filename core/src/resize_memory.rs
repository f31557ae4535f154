//! Whether an in-place resize may lower memory limits: a limit set below what the pod or a
//! container already uses cannot hold (the kernel refuses it, or reclaims and kills), so
//! upstream checks the usage first and leaves the resize in progress with an error instead.
//! Entry points: [`lowered_limits`], which limits a resize lowers, and [`refusal`], whether
//! the usage measured for them lets it go ahead.

use std::collections::BTreeMap;

use crate::resize::ResizeActions;
use crate::spec::PodCgroupResources;

/// The memory limits a resize lowers (or sets where there was none), in bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoweredLimits {
    /// The pod cgroup's new limit.
    pub pod: Option<i64>,
    /// Each container's new limit: `(name, runtime ID, limit)`.
    pub containers: Vec<(String, String, i64)>,
}

impl LoweredLimits {
    /// Whether the resize lowers no memory limit (and so needs no usage measured).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.pod.is_none() && self.containers.is_empty()
    }
}

/// The memory in use where a resize lowers a limit, measured just before it would apply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryInUse {
    /// The pod cgroup's usage in bytes; `None` when it could not be measured.
    pub pod: Option<u64>,
    /// Each container's usage in bytes, by name; a container missing was not measured.
    pub containers: BTreeMap<String, u64>,
}

/// Which memory limits `actions` lowers, given the pod cgroup's settings `pod_cgroup_now`
/// (`None` when sergeant manages no pod cgroup).
#[must_use]
pub fn lowered_limits(
    actions: &ResizeActions,
    pod_cgroup_now: Option<&PodCgroupResources>,
) -> LoweredLimits {
    let pod = actions
        .pod_cgroup_last
        .as_ref()
        .and_then(|wanted| wanted.memory_limit_bytes)
        .filter(|wanted| {
            pod_cgroup_now
                .and_then(|now| now.memory_limit_bytes)
                .is_none_or(|now| *wanted < now)
        });
    let containers = actions
        .updates
        .iter()
        .filter(|update| {
            let wanted = update.resources.memory_limit_in_bytes;
            wanted != 0 && (update.memory_limit_now == 0 || wanted < update.memory_limit_now)
        })
        .map(|update| {
            (
                update.name.clone(),
                update.id.clone(),
                update.resources.memory_limit_in_bytes,
            )
        })
        .collect();
    LoweredLimits { pod, containers }
}

/// Why the `lowered` limits cannot be applied with the memory `in_use`, worded as upstream
/// words it (clients and upstream's e2e specs match `memory limit (N) below current usage`);
/// `None` when every new limit is above what is used.
#[must_use]
pub fn refusal(lowered: &LoweredLimits, in_use: &MemoryInUse) -> Option<String> {
    let below = |limit: i64, used: u64| u64::try_from(limit).map_or(true, |limit| used >= limit);
    let mut problems = Vec::new();
    if let Some(limit) = lowered.pod {
        match in_use.pod {
            None => problems.push("missing pod memory usage".to_owned()),
            Some(used) if below(limit, used) => problems.push(format!(
                "attempting to set pod memory limit ({limit}) below current usage ({used})"
            )),
            Some(_) => {}
        }
    }
    for (name, _, limit) in &lowered.containers {
        match in_use.containers.get(name) {
            None => problems.push(format!("missing container {name:?} memory usage")),
            Some(&used) if below(*limit, used) => problems.push(format!(
                "attempting to set container {name:?} memory limit ({limit}) below current usage ({used})"
            )),
            Some(_) => {}
        }
    }
    match problems.as_slice() {
        [] => None,
        [one] => Some(format!("cannot decrease memory limits: {one}")),
        many => Some(format!(
            "cannot decrease memory limits: [{}]",
            many.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use k8s_cri::v1::LinuxContainerResources;

    use super::*;
    use crate::resize::ContainerUpdate;

    fn pod_cgroup(memory: Option<i64>) -> PodCgroupResources {
        PodCgroupResources {
            cpu_shares: 2,
            cpu_quota_us: None,
            memory_limit_bytes: memory,
        }
    }

    fn update(name: &str, now: i64, wanted: i64) -> ContainerUpdate {
        ContainerUpdate {
            id: format!("id-{name}"),
            name: name.to_owned(),
            resources: LinuxContainerResources {
                memory_limit_in_bytes: wanted,
                ..Default::default()
            },
            memory_limit_now: now,
        }
    }

    #[test]
    fn only_lowered_or_new_limits_count() {
        let actions = ResizeActions {
            pod_cgroup_first: None,
            updates: vec![
                update("raised", 100, 200),
                update("lowered", 200, 100),
                update("new", 0, 300),
                update("lifted", 200, 0),
            ],
            pod_cgroup_last: Some(pod_cgroup(Some(1000))),
        };
        let lowered = lowered_limits(&actions, Some(&pod_cgroup(Some(2000))));
        assert_eq!(
            lowered,
            LoweredLimits {
                pod: Some(1000),
                containers: vec![
                    ("lowered".into(), "id-lowered".into(), 100),
                    ("new".into(), "id-new".into(), 300)
                ],
            }
        );
        assert_eq!(
            lowered_limits(&actions, Some(&pod_cgroup(Some(500)))).pod,
            None,
            "the pod's limit rises"
        );
        assert_eq!(
            lowered_limits(&actions, Some(&pod_cgroup(None))).pod,
            Some(1000),
            "a limit where there was none"
        );
        assert!(lowered_limits(&ResizeActions::default(), None).is_empty());
    }

    #[test]
    fn a_limit_at_or_below_usage_is_refused_as_upstream_words_it() {
        let lowered = LoweredLimits {
            pod: Some(10240),
            containers: Vec::new(),
        };
        let in_use = |pod: Option<u64>| MemoryInUse {
            pod,
            containers: BTreeMap::new(),
        };
        assert_eq!(
            refusal(&lowered, &in_use(Some(4_000_000))).as_deref(),
            Some("cannot decrease memory limits: attempting to set pod memory limit (10240) below current usage (4000000)")
        );
        assert_eq!(
            refusal(&lowered, &in_use(Some(10240))).as_deref(),
            Some("cannot decrease memory limits: attempting to set pod memory limit (10240) below current usage (10240)"),
            "at the limit is no room"
        );
        assert_eq!(refusal(&lowered, &in_use(Some(10239))), None);
        assert_eq!(
            refusal(&lowered, &in_use(None)).as_deref(),
            Some("cannot decrease memory limits: missing pod memory usage")
        );
    }

    #[test]
    fn every_container_short_of_room_is_named() {
        let lowered = LoweredLimits {
            pod: None,
            containers: vec![
                ("a".into(), "id-a".into(), 100),
                ("b".into(), "id-b".into(), 100),
                ("c".into(), "id-c".into(), 100),
            ],
        };
        let in_use = MemoryInUse {
            pod: None,
            containers: BTreeMap::from([("a".into(), 50), ("b".into(), 150)]),
        };
        assert_eq!(
            refusal(&lowered, &in_use).as_deref(),
            Some("cannot decrease memory limits: [attempting to set container \"b\" memory limit (100) below current usage (150), missing container \"c\" memory usage]")
        );
    }
}
