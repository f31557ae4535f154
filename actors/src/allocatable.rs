//! What the node can give pods: its capacity minus `kubeReserved`, `systemReserved` and the
//! hard eviction threshold, as upstream computes `status.allocatable`. Admission checks pod
//! requests against it; node status (managed mode) reports it.

use sergeant_config::kubelet::ReservedResource;
use sergeant_config::{KubeletConfiguration, Signal, Threshold};

/// CPU and memory of the node, measured or left for pods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeResources {
    /// CPU in millicores.
    pub cpu_millis: i64,
    /// Memory in bytes.
    pub memory_bytes: i64,
}

impl NodeResources {
    /// This machine's capacity: its CPUs and `memory_bytes` of memory.
    #[must_use]
    pub fn of_machine(memory_bytes: u64) -> Self {
        let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        Self {
            cpu_millis: i64::try_from(cpus).unwrap_or(1).saturating_mul(1000),
            memory_bytes: i64::try_from(memory_bytes).unwrap_or(i64::MAX),
        }
    }

    /// What is left of `self` (the capacity) for pods under `config`; never negative.
    #[must_use]
    pub fn allocatable(self, config: &KubeletConfiguration) -> Self {
        let reserved = |resource: ReservedResource, milli: bool| -> i64 {
            [&config.kube_reserved, &config.system_reserved]
                .into_iter()
                .filter_map(|r| r.get(&resource))
                .map(|q| if milli { q.milli_value() } else { q.value() })
                .sum()
        };
        let eviction = match config.eviction_hard.get(&Signal::MemoryAvailable) {
            Some(Threshold::Quantity(q)) => q.value(),
            Some(Threshold::Percentage(percent)) => {
                // Truncation is intended: upstream rounds the threshold down to whole bytes.
                #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
                let bytes = (self.memory_bytes as f64 * percent / 100.0) as i64;
                bytes
            }
            None => 0,
        };
        Self {
            cpu_millis: (self.cpu_millis - reserved(ReservedResource::Cpu, true)).max(0),
            memory_bytes: (self.memory_bytes
                - reserved(ReservedResource::Memory, false)
                - eviction)
                .max(0),
        }
    }
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
}
