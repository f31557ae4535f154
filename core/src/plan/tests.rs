//! The plan as a table of facts: for a pod (restart policy, init containers, sidecars, regular
//! containers) and what the runtime shows (sandboxes, container states), what one sync does.
//! The cases follow what upstream's kubelet decides in computePodActions, written as sergeant's
//! own facts.

use std::time::{Duration, Instant, UNIX_EPOCH};

use k8s_cri::v1 as cri;
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec, Probe};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::*;
use crate::backoff::BackoffPolicy;
use crate::hash::container_hash;
use crate::labels;
use crate::runtime::{ObservedContainer, PodRuntime};

// ---------------------------------------------------------------------------------------------
// The pod.

fn container(name: &str) -> Container {
    Container {
        name: name.into(),
        image: Some(format!("{name}:1")),
        ..Default::default()
    }
}

fn sidecar(name: &str) -> Container {
    Container {
        restart_policy: Some("Always".into()),
        ..container(name)
    }
}

fn with_startup_probe(mut c: Container) -> Container {
    c.startup_probe = Some(Probe::default());
    c
}

fn pod(policy: &str, init: Vec<Container>, regular: Vec<Container>) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("default".into()),
            uid: Some("uid-1".into()),
            ..Default::default()
        },
        spec: Some(PodSpec {
            restart_policy: Some(policy.into()),
            init_containers: (!init.is_empty()).then_some(init),
            containers: regular,
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn spec_of<'a>(pod: &'a Pod, name: &str) -> &'a Container {
    crate::kind::all_containers(pod)
        .map(|(c, _)| c)
        .find(|c| c.name == name)
        .expect("the container is in the spec")
}

// ---------------------------------------------------------------------------------------------
// What the runtime shows.

/// A container state as a table row writes it.
#[derive(Clone, Copy)]
enum S {
    Created,
    Running,
    Exited(i32),
    Unknown,
}

struct World {
    pod: Pod,
    runtime: PodRuntime,
    probes: ProbeVerdicts,
    restarts: crate::backoff::Backoff,
    gates: crate::restart::RestartGates,
    next_created: i64,
}

const NOW_SECS: u64 = 1_800_000_000;

impl World {
    fn new(pod: Pod) -> Self {
        Self {
            pod,
            runtime: PodRuntime::default(),
            probes: ProbeVerdicts::default(),
            restarts: crate::backoff::Backoff::default(),
            gates: crate::restart::RestartGates::default(),
            next_created: 1,
        }
    }

    /// Adds a sandbox (the newest so far), with an address unless `address` is false.
    fn sandbox(mut self, id: &str, attempt: u32, ready: bool, address: bool) -> Self {
        let state = if ready {
            cri::PodSandboxState::SandboxReady
        } else {
            cri::PodSandboxState::SandboxNotready
        };
        let sandbox = cri::PodSandbox {
            id: id.into(),
            metadata: Some(cri::PodSandboxMetadata {
                attempt,
                ..Default::default()
            }),
            state: state as i32,
            created_at: self.tick(),
            ..Default::default()
        };
        self.runtime.sandboxes.insert(0, sandbox);
        self.runtime.sandbox_status = Some(cri::PodSandboxStatus {
            id: id.into(),
            network: Some(cri::PodSandboxNetworkStatus {
                ip: if address {
                    "10.88.0.7".into()
                } else {
                    String::new()
                },
                ..Default::default()
            }),
            ..Default::default()
        });
        self
    }

    /// Adds an instance (the newest so far) of the container `name` in sandbox `sandbox`,
    /// created from the pod's current spec of it.
    fn container(self, name: &str, sandbox: &str, state: S) -> Self {
        let hash = container_hash(spec_of(&self.pod, name));
        self.instance(name, sandbox, state, 0, &hash)
    }

    fn instance(mut self, name: &str, sandbox: &str, state: S, restarts: u32, hash: &str) -> Self {
        let (cri_state, exit_code) = match state {
            S::Created => (cri::ContainerState::ContainerCreated, 0),
            S::Running => (cri::ContainerState::ContainerRunning, 0),
            S::Exited(code) => (cri::ContainerState::ContainerExited, code),
            S::Unknown => (cri::ContainerState::ContainerUnknown, 0),
        };
        let created_at = self.tick();
        let started = i64::try_from(NOW_SECS - 60).unwrap() * 1_000_000_000;
        let status = cri::ContainerStatus {
            id: format!("{name}-{created_at}"),
            state: cri_state as i32,
            created_at,
            started_at: started,
            finished_at: if matches!(state, S::Exited(_)) {
                started + 5_000_000_000
            } else {
                0
            },
            exit_code,
            labels: [(labels::CONTAINER_NAME.to_owned(), name.to_owned())].into(),
            annotations: [
                (labels::CONTAINER_HASH.to_owned(), hash.to_owned()),
                (
                    labels::CONTAINER_RESTART_COUNT.to_owned(),
                    restarts.to_string(),
                ),
            ]
            .into_iter()
            .filter(|(_, value)| !value.is_empty())
            .collect(),
            ..Default::default()
        };
        self.runtime.containers.insert(
            0,
            ObservedContainer {
                sandbox_id: sandbox.into(),
                status,
            },
        );
        self
    }

    fn failed_probe(mut self, name: &str, probe: FailedProbe) -> Self {
        let id = self.id_of(name);
        self.probes.failed.insert(id, ProbeFailure { probe });
        self
    }

    fn startup_passed(mut self, name: &str) -> Self {
        let id = self.id_of(name);
        self.probes.started.insert(id);
        self
    }

    fn id_of(&self, name: &str) -> String {
        self.runtime
            .latest_anywhere(name)
            .map(|c| c.status.id.clone())
            .expect("the container has an instance")
    }

    fn tick(&mut self) -> i64 {
        self.next_created += 1;
        self.next_created
    }

    fn plan(&self) -> PodActions {
        plan(&PlanInput {
            pod: &self.pod,
            runtime: &self.runtime,
            restarts: &self.restarts,
            policy: BackoffPolicy {
                initial: Duration::from_secs(10),
                max: Duration::from_secs(300),
            },
            probes: &self.probes,
            now: Instant::now(),
            wall_clock: UNIX_EPOCH + Duration::from_secs(NOW_SECS),
            gates: self.gates,
        })
    }

    /// The same world with the feature gates `gates`.
    fn with_gates(mut self, gates: crate::restart::RestartGates) -> Self {
        self.gates = gates;
        self
    }
}

// ---------------------------------------------------------------------------------------------
// What the plan says, in a form a table row can state.

#[derive(Debug, PartialEq, Eq)]
struct Said {
    kill_pod: bool,
    create: Option<(u32, SandboxReason)>,
    remove: usize,
    kill: Vec<(String, KillReason)>,
    start: Vec<String>,
    waiting: Vec<String>,
}

fn said(actions: &PodActions) -> Said {
    Said {
        kill_pod: actions.kill_pod,
        create: actions.create_sandbox.map(|c| (c.attempt, c.reason)),
        remove: actions.remove.len(),
        kill: actions
            .kill
            .iter()
            .map(|k| (k.name.clone(), k.reason))
            .collect(),
        start: actions.start.iter().map(|s| s.name.clone()).collect(),
        waiting: actions.waiting.keys().cloned().collect(),
    }
}

fn nothing() -> Said {
    Said {
        kill_pod: false,
        create: None,
        remove: 0,
        kill: vec![],
        start: vec![],
        waiting: vec![],
    }
}

fn starts(names: &[&str]) -> Said {
    Said {
        start: names.iter().map(|n| (*n).to_owned()).collect(),
        ..nothing()
    }
}

fn creates(attempt: u32, reason: SandboxReason, names: &[&str]) -> Said {
    Said {
        create: Some((attempt, reason)),
        ..starts(names)
    }
}

fn kills_pod() -> Said {
    Said {
        kill_pod: true,
        ..nothing()
    }
}

fn waits(names: &[&str]) -> Said {
    Said {
        waiting: names.iter().map(|n| (*n).to_owned()).collect(),
        ..nothing()
    }
}

fn check(cases: Vec<(&str, World, Said)>) {
    let mut failures = Vec::new();
    for (name, world, expected) in cases {
        let got = said(&world.plan());
        if got != expected {
            failures.push(format!(
                "{name}:\n  expected {expected:?}\n  got      {got:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

fn two(policy: &str) -> Pod {
    pod(policy, vec![], vec![container("a"), container("b")])
}

// ---------------------------------------------------------------------------------------------
// The tables.

#[test]
fn sandbox_changes() {
    use SandboxReason::*;
    check(vec![
        (
            "a new pod gets a sandbox and every container",
            World::new(two("Always")),
            creates(0, NoSandbox, &["a", "b"]),
        ),
        (
            "a dead sandbox is replaced, one attempt later",
            World::new(two("Always"))
                .sandbox("s1", 0, false, true)
                .container("a", "s1", S::Exited(0))
                .container("b", "s1", S::Exited(0)),
            // Both exited with 0 a minute ago, ran 5 s: first restart, no back-off yet.
            creates(1, NotReady, &["a", "b"]),
        ),
        (
            "two ready sandboxes become one new one",
            World::new(two("Always"))
                .sandbox("s1", 0, true, true)
                .sandbox("s2", 1, true, true),
            creates(2, SeveralReady, &["a", "b"]),
        ),
        (
            "a pod-network sandbox without an address is replaced",
            World::new(two("Always")).sandbox("s1", 0, true, false),
            creates(1, NoAddress, &["a", "b"]),
        ),
        (
            "a host-network sandbox needs no address",
            {
                let mut p = two("Always");
                p.spec.as_mut().unwrap().host_network = Some(true);
                World::new(p)
                    .sandbox("s1", 0, true, false)
                    .container("a", "s1", S::Running)
                    .container("b", "s1", S::Running)
            },
            nothing(),
        ),
        (
            "a Never pod whose containers ran gets no new sandbox: it is killed",
            World::new(two("Never"))
                .sandbox("s1", 0, false, true)
                .container("a", "s1", S::Exited(0))
                .container("b", "s1", S::Exited(1)),
            kills_pod(),
        ),
        (
            "a Never pod whose sandbox died before any container gets another",
            World::new(two("Never")).sandbox("s1", 0, false, true),
            creates(1, NotReady, &["a", "b"]),
        ),
        (
            "an OnFailure pod whose containers all succeeded gets no new sandbox",
            World::new(two("OnFailure"))
                .sandbox("s1", 0, false, true)
                .container("a", "s1", S::Exited(0))
                .container("b", "s1", S::Exited(0)),
            kills_pod(),
        ),
        (
            "an OnFailure pod restarts only the failed one in its new sandbox",
            World::new(two("OnFailure"))
                .sandbox("s1", 0, false, true)
                .container("a", "s1", S::Exited(0))
                .container("b", "s1", S::Exited(2)),
            creates(1, NotReady, &["b"]),
        ),
        (
            "a new sandbox starts the init containers again from the first",
            World::new(pod(
                "Always",
                vec![container("i1"), container("i2")],
                vec![container("a")],
            ))
            .sandbox("s1", 0, false, true)
            .container("i1", "s1", S::Exited(0))
            .container("i2", "s1", S::Exited(0))
            .container("a", "s1", S::Exited(1)),
            creates(1, NotReady, &["i1"]),
        ),
    ]);
}

fn ready(world: World) -> World {
    world.sandbox("s1", 0, true, true)
}

#[test]
fn regular_containers_by_restart_policy_and_state() {
    let mut cases = Vec::new();
    // (policy, state of a, what happens to a) with b running throughout.
    let rows: [(&str, S, Said); 12] = [
        ("Always", S::Running, nothing()),
        ("Always", S::Exited(0), starts(&["a"])),
        ("Always", S::Exited(1), starts(&["a"])),
        (
            "Always",
            S::Created,
            Said {
                remove: 1,
                ..starts(&["a"])
            },
        ),
        ("OnFailure", S::Running, nothing()),
        ("OnFailure", S::Exited(0), nothing()),
        ("OnFailure", S::Exited(1), starts(&["a"])),
        (
            "OnFailure",
            S::Created,
            Said {
                remove: 1,
                ..starts(&["a"])
            },
        ),
        ("Never", S::Running, nothing()),
        ("Never", S::Exited(0), nothing()),
        ("Never", S::Exited(1), nothing()),
        (
            "Never",
            S::Created,
            Said {
                remove: 1,
                ..starts(&["a"])
            },
        ),
    ];
    for (policy, state, expected) in rows {
        let world = ready(World::new(two(policy)))
            .container("a", "s1", state)
            .container("b", "s1", S::Running);
        cases.push((policy, world, expected));
    }
    check(cases);
}

/// Container `name` with its own `restartPolicy` and, when `restart_on` is not empty, a rule
/// restarting it on those exit codes.
fn ruled(name: &str, policy: &str, restart_on: &[i32]) -> Container {
    use k8s_openapi::api::core::v1::{ContainerRestartRule, ContainerRestartRuleOnExitCodes};
    Container {
        restart_policy: Some(policy.into()),
        restart_policy_rules: (!restart_on.is_empty()).then(|| {
            vec![ContainerRestartRule {
                action: "Restart".into(),
                exit_codes: Some(ContainerRestartRuleOnExitCodes {
                    operator: "In".into(),
                    values: Some(restart_on.to_vec()),
                }),
            }]
        }),
        ..container(name)
    }
}

#[test]
fn container_restart_rules_and_policies_override_the_pods() {
    // (case, pod policy, a's policy, a's restart codes, a's exit, what happens) with b running.
    type Row = (
        &'static str,
        &'static str,
        &'static str,
        &'static [i32],
        i32,
        Said,
    );
    let rows: [Row; 7] = [
        (
            "rule matches in a Never pod",
            "Never",
            "Never",
            &[42],
            42,
            starts(&["a"]),
        ),
        ("rule does not match", "Never", "Never", &[42], 1, nothing()),
        (
            "own Never in an Always pod",
            "Always",
            "Never",
            &[],
            1,
            nothing(),
        ),
        (
            "own Always in a Never pod",
            "Never",
            "Always",
            &[],
            0,
            starts(&["a"]),
        ),
        (
            "own OnFailure, success",
            "Always",
            "OnFailure",
            &[],
            0,
            nothing(),
        ),
        (
            "own OnFailure, failure",
            "Never",
            "OnFailure",
            &[],
            3,
            starts(&["a"]),
        ),
        (
            "no match falls back to own Always",
            "Never",
            "Always",
            &[42],
            1,
            starts(&["a"]),
        ),
    ];
    let cases = rows
        .into_iter()
        .map(|(case, pod_policy, own, codes, exit, expected)| {
            let pod = pod(
                pod_policy,
                vec![],
                vec![ruled("a", own, codes), container("b")],
            );
            let world = ready(World::new(pod))
                .container("a", "s1", S::Exited(exit))
                .container("b", "s1", S::Running);
            (case, world, expected)
        })
        .collect();
    check(cases);
}

#[test]
fn with_container_restart_rules_off_the_pods_policy_decides() {
    let off = crate::restart::RestartGates {
        container_rules: false,
        restart_all: true,
    };
    let world = |pod_policy: &str, own: &str, codes: &[i32], exit: i32| {
        let pod = pod(
            pod_policy,
            vec![],
            vec![ruled("a", own, codes), container("b")],
        );
        ready(World::new(pod))
            .container("a", "s1", S::Exited(exit))
            .container("b", "s1", S::Running)
            .with_gates(off)
    };
    check(vec![
        (
            "a rule that would restart it is not read",
            world("Never", "Never", &[42], 42),
            nothing(),
        ),
        (
            "its own Never is not read in an Always pod",
            world("Always", "Never", &[], 1),
            starts(&["a"]),
        ),
    ]);
}

#[test]
fn a_pod_whose_only_container_may_not_restart_is_done_and_one_that_may_gets_a_new_sandbox() {
    let alone = |own: &str, codes: &[i32]| pod("Never", vec![], vec![ruled("a", own, codes)]);
    check(vec![
        (
            "Never everywhere, exited: done",
            ready(World::new(alone("Never", &[]))).container("a", "s1", S::Exited(1)),
            Said {
                kill_pod: true,
                ..nothing()
            },
        ),
        (
            "a rule restarts it after its sandbox died",
            World::new(alone("Never", &[42]))
                .sandbox("s1", 0, false, true)
                .container("a", "s1", S::Exited(42)),
            creates(1, SandboxReason::NotReady, &["a"]),
        ),
        (
            "its sandbox died after a rule's mismatch: done",
            World::new(alone("Never", &[42]))
                .sandbox("s1", 0, false, true)
                .container("a", "s1", S::Exited(1)),
            Said {
                kill_pod: true,
                ..nothing()
            },
        ),
    ]);
}

#[test]
fn unknown_containers_are_killed_then_restarted_as_the_policy_says() {
    let unknown = |policy| {
        ready(World::new(two(policy)))
            .container("a", "s1", S::Unknown)
            .container("b", "s1", S::Running)
    };
    check(vec![
        (
            "Always",
            unknown("Always"),
            Said {
                kill: vec![("a".into(), KillReason::UnknownState)],
                ..starts(&["a"])
            },
        ),
        (
            "Never",
            unknown("Never"),
            Said {
                kill: vec![("a".into(), KillReason::UnknownState)],
                ..nothing()
            },
        ),
    ]);
}

#[test]
fn a_pod_with_nothing_left_to_run_is_killed() {
    check(vec![
        (
            "Never, all exited",
            ready(World::new(two("Never")))
                .container("a", "s1", S::Exited(0))
                .container("b", "s1", S::Exited(3)),
            kills_pod(),
        ),
        (
            "OnFailure, all succeeded",
            ready(World::new(two("OnFailure")))
                .container("a", "s1", S::Exited(0))
                .container("b", "s1", S::Exited(0)),
            kills_pod(),
        ),
        (
            "Never, all exited, a sidecar still running: it goes with the pod",
            ready(World::new(pod(
                "Never",
                vec![sidecar("log")],
                vec![container("a")],
            )))
            .container("log", "s1", S::Running)
            .container("a", "s1", S::Exited(0)),
            kills_pod(),
        ),
        (
            "Never, one still running",
            ready(World::new(two("Never")))
                .container("a", "s1", S::Exited(0))
                .container("b", "s1", S::Running),
            nothing(),
        ),
    ]);
}

#[test]
fn changed_definitions_and_failed_probes() {
    let changed = |policy| {
        ready(World::new(two(policy)))
            .instance("a", "s1", S::Running, 0, "0000000000000000")
            .container("b", "s1", S::Running)
    };
    let probed = |policy, probe| {
        ready(World::new(two(policy)))
            .container("a", "s1", S::Running)
            .container("b", "s1", S::Running)
            .failed_probe("a", probe)
    };
    check(vec![
        (
            "a changed definition is replaced whatever the policy (Never)",
            changed("Never"),
            Said {
                kill: vec![("a".into(), KillReason::DefinitionChanged)],
                ..starts(&["a"])
            },
        ),
        (
            "a changed definition is replaced (Always)",
            changed("Always"),
            Said {
                kill: vec![("a".into(), KillReason::DefinitionChanged)],
                ..starts(&["a"])
            },
        ),
        (
            "an instance with no recorded hash is left alone",
            ready(World::new(two("Always")))
                .instance("a", "s1", S::Running, 0, "")
                .container("b", "s1", S::Running),
            nothing(),
        ),
        (
            "a failed liveness probe kills and restarts (Always)",
            probed("Always", FailedProbe::Liveness),
            Said {
                kill: vec![("a".into(), KillReason::Liveness)],
                ..starts(&["a"])
            },
        ),
        (
            "a failed liveness probe only kills (Never)",
            probed("Never", FailedProbe::Liveness),
            Said {
                kill: vec![("a".into(), KillReason::Liveness)],
                ..nothing()
            },
        ),
        (
            "a failed startup probe kills and restarts (OnFailure)",
            probed("OnFailure", FailedProbe::Startup),
            Said {
                kill: vec![("a".into(), KillReason::Startup)],
                ..starts(&["a"])
            },
        ),
    ]);
}

#[test]
fn init_containers_run_one_at_a_time_in_order() {
    let p = |policy| {
        pod(
            policy,
            vec![container("i1"), container("i2")],
            vec![container("a")],
        )
    };
    check(vec![
        (
            "the first init container first",
            ready(World::new(p("Always"))),
            starts(&["i1"]),
        ),
        (
            "a running init container holds everything after it",
            ready(World::new(p("Always"))).container("i1", "s1", S::Running),
            nothing(),
        ),
        (
            "the next one once the first succeeded",
            ready(World::new(p("Always"))).container("i1", "s1", S::Exited(0)),
            starts(&["i2"]),
        ),
        (
            "regular containers once all succeeded",
            ready(World::new(p("Always")))
                .container("i1", "s1", S::Exited(0))
                .container("i2", "s1", S::Exited(0)),
            starts(&["a"]),
        ),
        (
            "a failed init container runs again (Always)",
            ready(World::new(p("Always"))).container("i1", "s1", S::Exited(1)),
            starts(&["i1"]),
        ),
        (
            "a failed init container runs again (OnFailure)",
            ready(World::new(p("OnFailure"))).container("i1", "s1", S::Exited(1)),
            starts(&["i1"]),
        ),
        (
            "a failed init container fails a Never pod",
            ready(World::new(p("Never"))).container("i1", "s1", S::Exited(1)),
            kills_pod(),
        ),
        (
            "a half-created init container is removed and started",
            ready(World::new(p("Always"))).container("i1", "s1", S::Created),
            Said {
                remove: 1,
                ..starts(&["i1"])
            },
        ),
        (
            "once regular containers ran, init containers are done for good",
            ready(World::new(p("Always"))).container("a", "s1", S::Running),
            nothing(),
        ),
    ]);
}

#[test]
fn sidecars_start_in_order_and_keep_running() {
    let p = || {
        pod(
            "Never",
            vec![sidecar("proxy"), container("setup")],
            vec![container("a")],
        )
    };
    let probed = || {
        pod(
            "Always",
            vec![with_startup_probe(sidecar("proxy"))],
            vec![container("a")],
        )
    };
    check(vec![
        (
            "the sidecar first",
            ready(World::new(p())),
            starts(&["proxy"]),
        ),
        (
            "the next init container once the sidecar runs",
            ready(World::new(p())).container("proxy", "s1", S::Running),
            starts(&["setup"]),
        ),
        (
            "regular containers once the init container succeeded, the sidecar kept",
            ready(World::new(p()))
                .container("proxy", "s1", S::Running)
                .container("setup", "s1", S::Exited(0)),
            starts(&["a"]),
        ),
        (
            "a sidecar that exited is restarted even in a Never pod",
            ready(World::new(p()))
                .container("proxy", "s1", S::Exited(0))
                .container("setup", "s1", S::Exited(0))
                .container("a", "s1", S::Running),
            starts(&["proxy"]),
        ),
        (
            "a sidecar with a startup probe holds the next container until it passes",
            ready(World::new(probed())).container("proxy", "s1", S::Running),
            nothing(),
        ),
        (
            "and lets it go once it passed",
            ready(World::new(probed()))
                .container("proxy", "s1", S::Running)
                .startup_passed("proxy"),
            starts(&["a"]),
        ),
        (
            "a sidecar that failed liveness is restarted even in a Never pod",
            ready(World::new(p()))
                .container("proxy", "s1", S::Running)
                .container("setup", "s1", S::Exited(0))
                .container("a", "s1", S::Running)
                .failed_probe("proxy", FailedProbe::Liveness),
            Said {
                kill: vec![("proxy".into(), KillReason::Liveness)],
                ..starts(&["proxy"])
            },
        ),
    ]);
}

#[test]
fn crash_loops_wait_out_their_back_off() {
    let looping = |restarts: u32| {
        let mut world = ready(World::new(two("Always"))).container("b", "s1", S::Running);
        let hash = container_hash(spec_of(&world.pod, "a"));
        world = world.instance("a", "s1", S::Exited(1), restarts, &hash);
        world
    };
    // Started a minute ago, ran 5 s. Restart 3 means a back-off of 40 s (10 s doubled twice):
    // over. Restart 6 means 300 s (capped): still waiting.
    check(vec![
        (
            "the first crash restarts at once",
            looping(0),
            starts(&["a"]),
        ),
        (
            "a back-off that ran out restarts",
            looping(3),
            starts(&["a"]),
        ),
        ("a back-off still running waits", looping(6), waits(&["a"])),
    ]);
    let waiting = looping(6).plan();
    let why = &waiting.waiting["a"];
    assert_eq!(why.reason, "CrashLoopBackOff");
    assert_eq!(
        why.message,
        "back-off 5m0s restarting failed container=a pod=web_default(uid-1)"
    );
    assert!(
        waiting.restarts.next_expiry(Instant::now()).is_some(),
        "a sync is due when it ends"
    );
}

#[test]
fn a_changed_spec_starts_without_the_old_back_off() {
    // Restart 6 of the old spec would wait 5 min; the new spec (another image) starts now.
    let world = ready(World::new(two("Always")))
        .container("b", "s1", S::Running)
        .instance("a", "s1", S::Exited(1), 6, "0000000000000000");
    assert_eq!(said(&world.plan()), starts(&["a"]));
}

#[test]
fn restarts_record_what_the_back_off_needs() {
    let world = ready(World::new(two("Always")))
        .container("a", "s1", S::Exited(1))
        .container("b", "s1", S::Running);
    let actions = world.plan();
    let start = &actions.start[0];
    assert_eq!(start.restart_count, 1);
    assert_eq!(start.kind, ContainerKind::Regular);
    let restart = start.after_exit.as_ref().expect("a restart after an exit");
    assert_eq!(restart.ran_for, Duration::from_secs(5));
    assert_eq!(restart.key, backoff_key(spec_of(&world.pod, "a")));
    let killed = ready(World::new(two("Always")))
        .container("a", "s1", S::Running)
        .container("b", "s1", S::Running)
        .failed_probe("a", FailedProbe::Liveness)
        .plan();
    assert_eq!(
        killed.kill[0].message,
        "Container a failed liveness probe, will be restarted"
    );
    let probe_kill = killed.start[0]
        .after_exit
        .as_ref()
        .expect("a probe kill counts for the back-off");
    assert_eq!(
        probe_kill.ran_for,
        Duration::from_secs(60),
        "it ran from its start until now"
    );
    let replaced = ready(World::new(two("Always")))
        .instance("a", "s1", S::Running, 0, "0000000000000000")
        .container("b", "s1", S::Running)
        .plan();
    assert_eq!(
        replaced.start[0].after_exit, None,
        "a new definition is no crash"
    );
}

#[test]
fn a_probe_that_keeps_failing_backs_off_as_a_crash_loop() {
    // Restart 6 of the same spec: a 5 min back-off, counted from its start a minute ago.
    let probed = |probe| {
        let mut world = ready(World::new(two("Always"))).container("b", "s1", S::Running);
        let hash = container_hash(spec_of(&world.pod, "a"));
        world = world.instance("a", "s1", S::Running, 6, &hash);
        world.failed_probe("a", probe)
    };
    check(vec![
        (
            "liveness: killed, then waits",
            probed(FailedProbe::Liveness),
            Said {
                kill: vec![("a".into(), KillReason::Liveness)],
                ..waits(&["a"])
            },
        ),
        (
            "startup: killed, then waits",
            probed(FailedProbe::Startup),
            Said {
                kill: vec![("a".into(), KillReason::Startup)],
                ..waits(&["a"])
            },
        ),
    ]);
}

#[test]
fn kills_say_why_and_take_the_grace_period_upstream_gives() {
    let mut app = container("a");
    app.liveness_probe = Some(Probe {
        termination_grace_period_seconds: Some(3),
        ..Probe::default()
    });
    let mut sidecar_spec = sidecar("proxy");
    sidecar_spec.startup_probe = Some(Probe::default());
    let mut p = pod("Always", vec![sidecar_spec], vec![app, container("b")]);
    p.spec.as_mut().unwrap().termination_grace_period_seconds = Some(7);
    let world = ready(World::new(p))
        .container("proxy", "s1", S::Running)
        .startup_passed("proxy")
        .container("a", "s1", S::Running)
        .container("b", "s1", S::Unknown)
        .failed_probe("a", FailedProbe::Liveness);
    let kills: Vec<(String, String, Duration)> = world
        .plan()
        .kill
        .into_iter()
        .map(|k| (k.name, k.message, k.grace))
        .collect();
    assert_eq!(
        kills,
        vec![
            (
                "a".into(),
                "Container a failed liveness probe, will be restarted".into(),
                Duration::from_secs(3)
            ),
            (
                "b".into(),
                "Container is in \"unknown\" state, try killing it before restart".into(),
                Duration::from_secs(7)
            ),
        ]
    );
    let changed = ready(World::new(pod(
        "Never",
        vec![sidecar("proxy")],
        vec![container("a")],
    )))
    .instance("proxy", "s1", S::Running, 0, "0000000000000000")
    .container("a", "s1", S::Running)
    .plan();
    assert_eq!(
        (changed.kill[0].message.as_str(), changed.kill[0].grace),
        (
            "Init container proxy definition changed",
            Duration::from_secs(30)
        ),
        "as upstream, an init container's kill says nothing of a restart"
    );
}

#[test]
fn a_settled_pod_plans_nothing() {
    let world = ready(World::new(pod(
        "Always",
        vec![container("i"), sidecar("s")],
        vec![container("a")],
    )))
    .container("i", "s1", S::Exited(0))
    .container("s", "s1", S::Running)
    .container("a", "s1", S::Running);
    let actions = world.plan();
    assert!(actions.is_idle(), "{:?}", said(&actions));
    assert_eq!(actions.sandbox_id.as_deref(), Some("s1"));
}

#[path = "reset_tests.rs"]
mod reset;

#[path = "ephemeral_tests.rs"]
mod ephemeral;
