//! Table tests of the eviction decisions, written as facts of upstream's behaviour.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use sergeant_config::{KubeletConfiguration, Quantity, Threshold as Amount};

use super::decide::{decide, State};
use super::message::{self, ContainerUsage};
use super::rank::{rank, PodUsage, StorageParts, Usage};
use super::signals::{
    allocatable_memory, commit_memory_available, reclaimable_on_node, Observation, Observations,
    Pressure, Resource, Signal,
};
use super::thresholds::{self, Threshold};
use crate::stats::windows::system::CommitMemory;

const MI: u64 = 1024 * 1024;

fn hard(signal: Signal, value: &str) -> Threshold {
    Threshold {
        signal,
        value: value.parse().unwrap(),
        grace: None,
        min_reclaim: None,
    }
}

fn soft(signal: Signal, value: &str, grace_secs: u64) -> Threshold {
    Threshold {
        grace: Some(Duration::from_secs(grace_secs)),
        ..hard(signal, value)
    }
}

fn seen(pairs: &[(Signal, u64, u64)]) -> Observations {
    pairs
        .iter()
        .map(|(s, available, capacity)| {
            (
                *s,
                Observation {
                    available: *available,
                    capacity: *capacity,
                },
            )
        })
        .collect()
}

#[test]
fn thresholds_are_met_below_their_quantity_or_percentage() {
    let cases = [
        // (threshold, available, capacity, met)
        (
            hard(Signal::MemoryAvailable, "100Mi"),
            99 * MI,
            1000 * MI,
            true,
        ),
        (
            hard(Signal::MemoryAvailable, "100Mi"),
            100 * MI,
            1000 * MI,
            false,
        ),
        (hard(Signal::NodeFsAvailable, "10%"), 99, 1000, true),
        (hard(Signal::NodeFsAvailable, "10%"), 100, 1000, false),
        (hard(Signal::PidAvailable, "500"), 499, 4_194_304, true),
        (hard(Signal::PidAvailable, "0%"), 0, 100, false),
    ];
    for (threshold, available, capacity, want) in cases {
        let observed = Observation {
            available,
            capacity,
        };
        assert_eq!(
            threshold.met(&observed, false),
            want,
            "{threshold:?} at {available}"
        );
    }
}

#[test]
fn the_configuration_gives_hard_then_soft_thresholds_with_their_reclaims() {
    let mut config = KubeletConfiguration::default();
    config
        .eviction_soft
        .insert(Signal::MemoryAvailable, "1Gi".parse().unwrap());
    config.eviction_soft_grace_period.insert(
        Signal::MemoryAvailable,
        sergeant_config::Duration::from_secs(30),
    );
    config
        .eviction_minimum_reclaim
        .insert(Signal::NodeFsAvailable, "5%".parse().unwrap());
    let all = thresholds::of_config(&config);
    // Upstream's Linux defaults, then the soft one.
    let signals: Vec<(Signal, bool)> = all.iter().map(Threshold::key).collect();
    assert_eq!(
        signals,
        [
            (Signal::MemoryAvailable, true),
            (Signal::NodeFsAvailable, true),
            (Signal::NodeFsInodesFree, true),
            (Signal::ImageFsAvailable, true),
            (Signal::MemoryAvailable, false),
        ]
    );
    assert_eq!(all[4].grace, Some(Duration::from_secs(30)));
    assert_eq!(all[1].min_reclaim, Some(Amount::Percentage(5.0)));
    assert_eq!(all[0].value, Amount::Quantity(Quantity::mebibytes(100)));
}

#[test]
fn a_hard_threshold_reports_pressure_and_acts_at_once() {
    let thresholds = [hard(Signal::MemoryAvailable, "100Mi")];
    let mut state = State::default();
    let now = Instant::now();
    let low = seen(&[(Signal::MemoryAvailable, 50 * MI, 1000 * MI)]);
    let decision = decide(&thresholds, &low, &mut state, Duration::from_secs(300), now);
    assert_eq!(decision.pressure, BTreeSet::from([Pressure::Memory]));
    let reclaim = decision.reclaim.expect("acts at once");
    assert_eq!(reclaim.resource, Resource::Memory);
    assert_eq!(reclaim.observed.available, 50 * MI);
}

#[test]
fn a_soft_threshold_reports_pressure_at_once_but_acts_after_its_grace_period() {
    let thresholds = [soft(Signal::MemoryAvailable, "100Mi", 30)];
    let mut state = State::default();
    let start = Instant::now();
    let low = seen(&[(Signal::MemoryAvailable, 50 * MI, 1000 * MI)]);
    let period = Duration::from_secs(300);
    let first = decide(&thresholds, &low, &mut state, period, start);
    assert_eq!(first.pressure, BTreeSet::from([Pressure::Memory]));
    assert_eq!(first.reclaim, None, "within its grace period");
    let later = decide(
        &thresholds,
        &low,
        &mut state,
        period,
        start + Duration::from_secs(29),
    );
    assert_eq!(later.reclaim, None);
    let past = decide(
        &thresholds,
        &low,
        &mut state,
        period,
        start + Duration::from_secs(30),
    );
    assert!(past.reclaim.is_some(), "held for its grace period");
    // Relieved, then low again: the grace period starts over.
    let fine = seen(&[(Signal::MemoryAvailable, 500 * MI, 1000 * MI)]);
    decide(
        &thresholds,
        &fine,
        &mut state,
        period,
        start + Duration::from_secs(40),
    );
    let again = decide(
        &thresholds,
        &low,
        &mut state,
        period,
        start + Duration::from_secs(50),
    );
    assert_eq!(again.reclaim, None);
}

#[test]
fn pressure_stays_for_the_transition_period_after_it_was_last_observed() {
    let thresholds = [hard(Signal::PidAvailable, "100")];
    let mut state = State::default();
    let start = Instant::now();
    let period = Duration::from_secs(60);
    let low = seen(&[(Signal::PidAvailable, 10, 1000)]);
    let fine = seen(&[(Signal::PidAvailable, 900, 1000)]);
    decide(&thresholds, &low, &mut state, period, start);
    let cases = [(1, true), (59, true), (60, false), (61, false)];
    for (secs, pressure) in cases {
        let decision = decide(
            &thresholds,
            &fine,
            &mut state,
            period,
            start + Duration::from_secs(secs),
        );
        assert_eq!(decision.reclaim, None, "nothing to reclaim at {secs}s");
        assert_eq!(
            decision.pressure.contains(&Pressure::Pid),
            pressure,
            "at {secs}s"
        );
    }
}

#[test]
fn a_threshold_acted_on_stays_met_until_its_minimum_reclaim_is_available() {
    let threshold = Threshold {
        min_reclaim: Some("50Mi".parse().unwrap()),
        ..hard(Signal::NodeFsAvailable, "100Mi")
    };
    let thresholds = [threshold];
    let mut state = State::default();
    let now = Instant::now();
    let period = Duration::ZERO;
    let at = |available| seen(&[(Signal::NodeFsAvailable, available, 1000 * MI)]);
    assert!(decide(&thresholds, &at(90 * MI), &mut state, period, now)
        .reclaim
        .is_some());
    // Above the threshold, below threshold + minimum reclaim: still reclaiming.
    assert!(decide(&thresholds, &at(120 * MI), &mut state, period, now)
        .reclaim
        .is_some());
    assert!(decide(&thresholds, &at(150 * MI), &mut state, period, now)
        .reclaim
        .is_none());
    // Not acted on: the minimum reclaim does not make it met.
    assert!(decide(&thresholds, &at(120 * MI), &mut state, period, now)
        .reclaim
        .is_none());
}

#[test]
fn memory_is_reclaimed_before_disk_and_each_signal_has_its_condition() {
    let thresholds = [
        hard(Signal::NodeFsAvailable, "10%"),
        hard(Signal::PidAvailable, "10"),
        hard(Signal::MemoryAvailable, "100Mi"),
    ];
    let low = seen(&[
        (Signal::NodeFsAvailable, 1, 1000),
        (Signal::PidAvailable, 1, 1000),
        (Signal::MemoryAvailable, MI, 1000 * MI),
    ]);
    let decision = decide(
        &thresholds,
        &low,
        &mut State::default(),
        Duration::ZERO,
        Instant::now(),
    );
    assert_eq!(
        decision.pressure,
        BTreeSet::from([Pressure::Memory, Pressure::Disk, Pressure::Pid])
    );
    assert_eq!(
        decision.reclaim.unwrap().threshold.signal,
        Signal::MemoryAvailable
    );
    // An unobserved signal (no image filesystem reading) is never met.
    let unseen = [hard(Signal::ImageFsAvailable, "100%")];
    let decision = decide(
        &unseen,
        &low,
        &mut State::default(),
        Duration::ZERO,
        Instant::now(),
    );
    assert!(decision.pressure.is_empty() && decision.reclaim.is_none());
}

#[test]
fn windows_memory_available_is_what_can_still_be_committed_of_the_commit_limit() {
    let commit = CommitMemory {
        limit_bytes: 1024 * MI,
        total_bytes: 1000 * MI,
    };
    assert_eq!(
        commit_memory_available(commit),
        Observation {
            available: 24 * MI,
            capacity: 1024 * MI
        }
    );
    let over = CommitMemory {
        limit_bytes: MI,
        total_bytes: 2 * MI,
    };
    assert_eq!(commit_memory_available(over).available, 0);
}

#[test]
fn allocatable_memory_is_the_pods_cgroup_limit_less_its_working_set() {
    let observed = allocatable_memory(Some(1024 * MI), 1000 * MI).unwrap();
    assert_eq!(
        observed,
        Observation {
            available: 24 * MI,
            capacity: 1024 * MI
        }
    );
    // Over the limit (the kernel reclaims at it): nothing available, never below zero.
    assert_eq!(allocatable_memory(Some(MI), 2 * MI).unwrap().available, 0);
    // Without a limit nothing is observed, so no threshold of the signal is ever met.
    assert_eq!(allocatable_memory(None, MI), None);
    let thresholds = [hard(Signal::AllocatableMemoryAvailable, "100Mi")];
    let decision = decide(
        &thresholds,
        &seen(&[(Signal::AllocatableMemoryAvailable, 24 * MI, 1024 * MI)]),
        &mut State::default(),
        Duration::ZERO,
        Instant::now(),
    );
    assert_eq!(decision.pressure, BTreeSet::from([Pressure::Memory]));
    let reclaim = decision.reclaim.unwrap();
    assert_eq!(reclaim.resource, Resource::Memory);
    assert_eq!(
        message::evicted(
            reclaim.resource,
            reclaim.threshold.quantity(1024 * MI),
            24 * MI,
            &[]
        ),
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 24Mi. "
    );
}

#[test]
fn node_level_reclaim_is_for_the_filesystem_holding_the_images() {
    use Signal::*;
    // (signal, dedicated image filesystem, reclaimed on the node)
    let cases = [
        (NodeFsAvailable, Some(false), true),
        (NodeFsInodesFree, Some(false), true),
        (NodeFsAvailable, None, true),
        (NodeFsAvailable, Some(true), false),
        (NodeFsInodesFree, Some(true), false),
        (ImageFsAvailable, Some(true), true),
        (ImageFsInodesFree, Some(false), true),
        (ContainerFsAvailable, Some(true), true),
        (MemoryAvailable, Some(false), false),
        (AllocatableMemoryAvailable, None, false),
        (PidAvailable, Some(false), false),
    ];
    for (signal, dedicated, expected) in cases {
        assert_eq!(
            reclaimable_on_node(signal, dedicated),
            expected,
            "{signal} with a dedicated image filesystem {dedicated:?}"
        );
    }
}

#[test]
fn disk_ranking_counts_the_parts_on_the_starved_filesystem() {
    use Signal::*;
    let parts = |layers, logs_and_volumes| StorageParts {
        layers,
        logs_and_volumes,
    };
    // (signal, dedicated image filesystem, what counts)
    let cases = [
        (NodeFsAvailable, Some(true), parts(false, true)),
        (NodeFsInodesFree, Some(true), parts(false, true)),
        (ImageFsAvailable, Some(true), parts(true, false)),
        (ContainerFsInodesFree, Some(true), parts(true, false)),
        (NodeFsAvailable, Some(false), parts(true, true)),
        (ImageFsAvailable, Some(false), parts(true, true)),
        (NodeFsAvailable, None, parts(true, true)),
        (MemoryAvailable, Some(true), parts(true, true)),
    ];
    for (signal, dedicated, expected) in cases {
        assert_eq!(
            StorageParts::of(signal, dedicated),
            expected,
            "{signal} with a dedicated image filesystem {dedicated:?}"
        );
    }
}

fn usage(uid: &str, priority: i32, used: u64, requested: u64) -> PodUsage {
    PodUsage {
        uid: uid.to_owned(),
        priority,
        memory: Some(Usage { used, requested }),
        storage: Some(Usage { used, requested }),
        inodes: Some(used),
        processes: Some(used),
    }
}

fn ranked(resource: Resource, mut pods: Vec<PodUsage>) -> Vec<String> {
    rank(resource, &mut pods);
    pods.into_iter().map(|p| p.uid).collect()
}

#[test]
fn memory_and_storage_rank_over_request_then_priority_then_excess() {
    for resource in [Resource::Memory, Resource::EphemeralStorage] {
        let pods = vec![
            usage("guaranteed-big", 0, 900, 1000), // under its request
            usage("over-small", 0, 200, 100),      // above by 100
            usage("over-big", 0, 600, 100),        // above by 500
            usage("over-important", 1000, 900, 0), // above, high priority
            PodUsage {
                uid: "unmeasured".to_owned(),
                ..PodUsage::default()
            },
        ];
        assert_eq!(
            ranked(resource, pods),
            [
                "unmeasured",
                "over-big",
                "over-small",
                "over-important",
                "guaranteed-big"
            ],
            "{resource}"
        );
    }
}

#[test]
fn pids_and_inodes_rank_by_priority_then_count() {
    for resource in [Resource::Pids, Resource::Inodes] {
        let pods = vec![
            usage("few", 0, 5, 0),
            usage("many-important", 10, 500, 0),
            usage("many", 0, 500, 0),
        ];
        assert_eq!(
            ranked(resource, pods),
            ["many", "few", "many-important"],
            "{resource}"
        );
    }
}

#[test]
fn the_evicted_message_names_the_resource_threshold_and_greedy_containers() {
    let message = message::evicted(
        Resource::Memory,
        100 * MI,
        50 * MI,
        &[
            ContainerUsage {
                name: "hog".to_owned(),
                used: 1536 * 1024,
                requested: 0,
            },
            ContainerUsage {
                name: "modest".to_owned(),
                used: MI,
                requested: 2 * MI,
            },
        ],
    );
    assert_eq!(
        message,
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. \
         Container hog was using 1536Ki, request is 0, has larger consumption of memory. "
    );
    assert_eq!(
        message::evicted(Resource::Pids, 100, 7, &[]),
        "The node was low on resource: pids. Threshold quantity: 100, available: 7. "
    );
    assert_eq!(
        message::format_amount(Resource::EphemeralStorage, 1000),
        "1000"
    );
    assert_eq!(
        message::format_amount(Resource::EphemeralStorage, 3 * MI * 1024),
        "3Gi"
    );
}

fn pod(json: serde_json::Value) -> Pod {
    serde_json::from_value(json).unwrap()
}

#[test]
fn admission_under_pressure_refuses_as_upstream() {
    let best_effort = pod(serde_json::json!({"metadata": {"name": "be"},
        "spec": {"containers": [{"name": "c", "image": "i"}]}}));
    let burstable = pod(serde_json::json!({"metadata": {"name": "bu"},
        "spec": {"containers": [{"name": "c", "image": "i",
            "resources": {"requests": {"memory": "10Mi"}}}]}}));
    let tolerant = pod(serde_json::json!({"metadata": {"name": "t"},
        "spec": {"containers": [{"name": "c", "image": "i"}],
            "tolerations": [{"key": MEMORY_TAINT, "operator": "Exists", "effect": "NoSchedule"}]}}));
    let critical = pod(serde_json::json!({"metadata": {"name": "crit"},
        "spec": {"priority": 2_000_001_000, "containers": [{"name": "c", "image": "i"}]}}));
    let memory = BTreeSet::from([Pressure::Memory]);
    let disk = BTreeSet::from([Pressure::Disk]);
    let both = BTreeSet::from([Pressure::Memory, Pressure::Disk]);
    let none = BTreeSet::new();
    let cases = [
        (&best_effort, &none, None),
        (
            &best_effort,
            &memory,
            Some("The node had condition: [MemoryPressure]. "),
        ),
        (&burstable, &memory, None),
        (&tolerant, &memory, None),
        (
            &burstable,
            &disk,
            Some("The node had condition: [DiskPressure]. "),
        ),
        (
            &tolerant,
            &both,
            Some("The node had condition: [MemoryPressure DiskPressure]. "),
        ),
        (&critical, &both, None),
    ];
    for (pod, pressure, refused) in cases {
        let result = message::admit(pod, pressure);
        let name = pod.metadata.name.as_deref().unwrap();
        match refused {
            None => assert_eq!(result, Ok(()), "{name} under {pressure:?}"),
            Some(text) => {
                let rejection = result.expect_err(name);
                assert_eq!(rejection.reason, "Evicted");
                assert_eq!(rejection.message, text);
            }
        }
    }
}

const MEMORY_TAINT: &str = message::MEMORY_PRESSURE_TAINT;
