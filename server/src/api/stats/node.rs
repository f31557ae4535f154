//! The node section of the summary, made from one [`NodeSample`] of the host's stats reader:
//! its CPU rate taken against the listener's previous sample of the node; no `rlimit` when the
//! sample has neither the process limit nor the count (Windows).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use sergeant_core::stats::summary::{CpuStats, FsStats, NodeStats, RuntimeStats};
use sergeant_host::stats::node::NodeSample;

use super::rate::{CpuRates, NODE};

/// The node section of `sample`, its CPU rate taken against the node's previous sample in
/// `rates`.
pub fn stats(
    sample: NodeSample,
    node_name: String,
    rates: &mut CpuRates,
    image_fs: Option<FsStats>,
) -> NodeStats {
    let usage = sample.stat.busy_core_nanos;
    NodeStats {
        node_name,
        start_time: Time(
            Timestamp::from_second(sample.stat.boot_time).unwrap_or(Timestamp::UNIX_EPOCH),
        ),
        cpu: Some(CpuStats {
            time: sample.clock.time(),
            usage_nano_cores: rates.rate(NODE, sample.clock.ns(), usage),
            usage_core_nano_seconds: Some(usage),
        }),
        memory: Some(sample.memory),
        network: sample.network,
        fs: Some(sample.fs),
        runtime: Some(RuntimeStats { image_fs }),
        // Windows has no process limit to report: upstream leaves the section out there.
        rlimit: Some(sample.rlimit).filter(|r| r.maxpid.is_some() || r.curproc.is_some()),
        system_containers: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sergeant_host::stats::node::sample;

    #[test]
    fn this_node_has_a_rate_on_the_second_sample() {
        let dir = tempfile::tempdir().unwrap();
        let mut rates = CpuRates::default();
        let first = stats(sample(dir.path()).unwrap(), "n".into(), &mut rates, None);
        let memory = first.memory.unwrap();
        assert!(memory.usage_bytes.unwrap() >= memory.working_set_bytes.unwrap());
        let cpu = first.cpu.unwrap();
        assert_eq!(cpu.usage_nano_cores, None);
        assert!(first.rlimit.is_some(), "Linux has a process limit");
        std::thread::sleep(std::time::Duration::from_millis(1100));
        let second = stats(sample(dir.path()).unwrap(), "n".into(), &mut rates, None);
        let later = second.cpu.unwrap();
        assert!(later.usage_core_nano_seconds >= cpu.usage_core_nano_seconds);
        assert!(later.usage_nano_cores.is_some());
    }
}
