//! What the node can give pods: its capacity minus `kubeReserved`, `systemReserved` and the
//! hard eviction thresholds, as upstream computes `status.allocatable`. Admission checks pod
//! requests against it; node status (managed mode) reports it.

use sergeant_config::kubelet::{AllocatableEnforcement, ReservedResource};

use sergeant_config::{KubeletConfiguration, Signal, Threshold};

/// The node's resources, measured (capacity) or left for pods (allocatable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeResources {
    /// CPU in millicores.
    pub cpu_millis: i64,
    /// Memory in bytes.
    pub memory_bytes: i64,
    /// Local ephemeral storage (the root dir's filesystem) in bytes; zero when not measured.
    pub ephemeral_storage_bytes: i64,
    /// How many pods the node runs (`maxPods`); zero when not set.
    pub pods: i64,
}

impl NodeResources {
    /// A machine of `cpus` logical CPUs and `memory_bytes` of memory, both as the host measured
    /// them (the machine's, not what the agent's own process may use); storage and pods are
    /// not measured (zero) until [`NodeResources::with_ephemeral_storage`] and
    /// [`NodeResources::with_pods`].
    #[must_use]
    pub fn of_machine(cpus: u32, memory_bytes: u64) -> Self {
        Self {
            cpu_millis: i64::from(cpus) * 1000,
            memory_bytes: saturating_i64(memory_bytes),
            ephemeral_storage_bytes: 0,
            pods: 0,
        }
    }

    /// The same resources with `bytes` of local ephemeral storage.
    #[must_use]
    pub fn with_ephemeral_storage(self, bytes: u64) -> Self {
        Self {
            ephemeral_storage_bytes: saturating_i64(bytes),
            ..self
        }
    }

    /// The same resources with room for `max_pods` pods.
    #[must_use]
    pub fn with_pods(self, max_pods: i32) -> Self {
        Self {
            pods: i64::from(max_pods.max(0)),
            ..self
        }
    }

    /// What is left of `self` (the capacity) for pods under `config`; never negative. Memory
    /// also holds back `memory.available` and ephemeral storage `nodefs.available`; pods are
    /// not reserved.
    #[must_use]
    pub fn allocatable(self, config: &KubeletConfiguration) -> Self {
        let reserved = |resource, milli| reserved(config, resource, milli);
        let eviction = |signal: Signal, capacity: i64| -> i64 {
            match config.eviction_hard.get(&signal) {
                Some(Threshold::Quantity(q)) => q.value(),
                Some(Threshold::Percentage(percent)) => {
                    // Truncation is intended: upstream rounds the threshold down to whole bytes.
                    #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
                    let bytes = (capacity as f64 * percent / 100.0) as i64;
                    bytes
                }
                None => 0,
            }
        };
        let left = |capacity: i64, resource: ReservedResource, signal: Signal| -> i64 {
            (capacity - reserved(resource, false) - eviction(signal, capacity)).max(0)
        };
        Self {
            cpu_millis: (self.cpu_millis - reserved(ReservedResource::Cpu, true)).max(0),
            memory_bytes: left(
                self.memory_bytes,
                ReservedResource::Memory,
                Signal::MemoryAvailable,
            ),
            ephemeral_storage_bytes: left(
                self.ephemeral_storage_bytes,
                ReservedResource::EphemeralStorage,
                Signal::NodeFsAvailable,
            ),
            pods: self.pods,
        }
    }

    /// The limits of the cgroup of all pods (`kubepods`) on a node with this capacity and
    /// `pid_max` processes: with `enforceNodeAllocatable: [pods]`, the capacity less
    /// `kubeReserved` and `systemReserved` (not the eviction thresholds, which are the eviction
    /// manager's to keep, as upstream), and a process limit only where pids are reserved;
    /// without it, the capacity and no process limit.
    #[must_use]
    pub fn pods_cgroup_limits(
        self,
        config: &KubeletConfiguration,
        pid_max: i64,
    ) -> PodsCgroupLimits {
        let enforced = config
            .enforce_node_allocatable
            .contains(&AllocatableEnforcement::Pods);
        let held = |resource, milli| {
            if enforced {
                reserved(config, resource, milli)
            } else {
                0
            }
        };
        let pids_held = held(ReservedResource::Pid, false);
        PodsCgroupLimits {
            cpu_millis: (self.cpu_millis - held(ReservedResource::Cpu, true)).max(0),
            memory_bytes: Some((self.memory_bytes - held(ReservedResource::Memory, false)).max(0)),
            pids: (pids_held > 0).then(|| (pid_max - pids_held).max(0)),
        }
    }
}

/// The sum of `kubeReserved` and `systemReserved` for `resource`, in millis or whole units.
fn reserved(config: &KubeletConfiguration, resource: ReservedResource, milli: bool) -> i64 {
    [&config.kube_reserved, &config.system_reserved]
        .into_iter()
        .filter_map(|r| r.get(&resource))
        .map(|q| if milli { q.milli_value() } else { q.value() })
        .fold(0, i64::saturating_add)
}

/// What all pods together may use: the limits of the `kubepods` cgroup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PodsCgroupLimits {
    /// CPU in millicores, turned into `cpu.shares`.
    pub cpu_millis: i64,
    /// Memory in bytes; `None`: unlimited.
    pub memory_bytes: Option<i64>,
    /// Processes; `None`: unlimited.
    pub pids: Option<i64>,
}

fn saturating_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sergeant_config::Quantity;

    const GIB: i64 = 1 << 30;

    fn capacity() -> NodeResources {
        NodeResources {
            cpu_millis: 4000,
            memory_bytes: 8 * GIB,
            ephemeral_storage_bytes: 100 * GIB,
            pods: 110,
        }
    }

    #[test]
    fn the_default_config_holds_back_the_hard_eviction_threshold_only() {
        let left = capacity().allocatable(&KubeletConfiguration::default());
        assert_eq!(left.cpu_millis, 4000);
        assert_eq!(left.memory_bytes, 8 * GIB - 100 * (1 << 20));
    }

    #[test]
    fn kube_and_system_reservations_add_up() {
        let mut config = KubeletConfiguration::default();
        config.eviction_hard.clear();
        config
            .kube_reserved
            .insert(ReservedResource::Cpu, "500m".parse::<Quantity>().unwrap());
        config
            .system_reserved
            .insert(ReservedResource::Cpu, "250m".parse::<Quantity>().unwrap());
        config
            .kube_reserved
            .insert(ReservedResource::Memory, "1Gi".parse::<Quantity>().unwrap());
        config
            .eviction_hard
            .insert(Signal::MemoryAvailable, Threshold::Percentage(10.0));
        let left = capacity().allocatable(&config);
        assert_eq!(left.cpu_millis, 3250);
        assert_eq!(left.memory_bytes, 8 * GIB - GIB - (8 * GIB) / 10);
    }

    #[test]
    fn reserving_more_than_there_is_leaves_nothing_not_less() {
        let mut config = KubeletConfiguration::default();
        config
            .system_reserved
            .insert(ReservedResource::Cpu, "8".parse::<Quantity>().unwrap());
        assert_eq!(capacity().allocatable(&config).cpu_millis, 0);
    }

    #[test]
    fn ephemeral_storage_holds_back_its_reservations_and_nodefs_available() {
        let default = capacity().allocatable(&KubeletConfiguration::default());
        assert_eq!(
            default.ephemeral_storage_bytes,
            90 * GIB,
            "nodefs.available<10%"
        );
        assert_eq!(default.pods, 110, "pods are not reserved");
        let mut config = KubeletConfiguration::default();
        config.kube_reserved.insert(
            ReservedResource::EphemeralStorage,
            "1Gi".parse::<Quantity>().unwrap(),
        );
        config.eviction_hard.insert(
            Signal::NodeFsAvailable,
            Threshold::Quantity("2Gi".parse::<Quantity>().unwrap()),
        );
        let left = capacity().allocatable(&config);
        assert_eq!(left.ephemeral_storage_bytes, 97 * GIB);
    }

    #[test]
    fn the_builders_fill_in_storage_and_pods() {
        let machine = NodeResources::of_machine(96, GIB as u64)
            .with_ephemeral_storage(5 * GIB as u64)
            .with_pods(20);
        assert_eq!(machine.cpu_millis, 96_000);
        assert_eq!(machine.memory_bytes, GIB);
        assert_eq!(machine.ephemeral_storage_bytes, 5 * GIB);
        assert_eq!(machine.pods, 20);
    }

    #[test]
    fn the_pods_cgroup_holds_back_reservations_only_when_pods_are_enforced() {
        let mut config = KubeletConfiguration::default();
        for (resource, amount) in [
            (ReservedResource::Cpu, "500m"),
            (ReservedResource::Memory, "1Gi"),
            (ReservedResource::Pid, "1000"),
        ] {
            config
                .kube_reserved
                .insert(resource, amount.parse::<Quantity>().unwrap());
        }
        let limits = capacity().pods_cgroup_limits(&config, 32_768);
        assert_eq!(limits.cpu_millis, 3500);
        assert_eq!(
            limits.memory_bytes,
            Some(7 * GIB),
            "eviction thresholds stay out"
        );
        assert_eq!(limits.pids, Some(31_768));
        config.enforce_node_allocatable.clear();
        let limits = capacity().pods_cgroup_limits(&config, 32_768);
        assert_eq!(
            (limits.cpu_millis, limits.memory_bytes, limits.pids),
            (4000, Some(8 * GIB), None)
        );
    }
}
