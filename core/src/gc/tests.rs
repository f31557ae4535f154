use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use k8s_cri::v1 as cri;
use sergeant_config::sergeant::GarbageCollection;

use super::{plan, Existing, Plan, Policy, RuntimeObjects};
use crate::labels;

const NODE: &str = "node-a";
const RUNNING: cri::ContainerState = cri::ContainerState::ContainerRunning;
const EXITED: cri::ContainerState = cri::ContainerState::ContainerExited;
const CREATED: cri::ContainerState = cri::ContainerState::ContainerCreated;
/// "Now" for every test: 1000 s after the epoch, in nanoseconds.
const NOW: i64 = 1_000_000_000_000;

fn pod_labels(uid: &str, node: &str) -> HashMap<String, String> {
    HashMap::from([
        (labels::NODE.to_owned(), node.to_owned()),
        (labels::POD_UID.to_owned(), uid.to_owned()),
        (labels::POD_NAMESPACE.to_owned(), "ns".to_owned()),
        (labels::POD_NAME.to_owned(), format!("pod-{uid}")),
    ])
}

/// Container `id` of pod `uid`, in sandbox `sb-<uid>`, created `age_s` seconds before NOW.
fn container(
    id: &str,
    uid: &str,
    name: &str,
    state: cri::ContainerState,
    age_s: i64,
) -> cri::Container {
    let mut labels = pod_labels(uid, NODE);
    labels.insert(labels::CONTAINER_NAME.to_owned(), name.to_owned());
    cri::Container {
        id: id.to_owned(),
        pod_sandbox_id: format!("sb-{uid}"),
        state: state as i32,
        created_at: NOW - age_s * 1_000_000_000,
        labels,
        ..Default::default()
    }
}

fn sandbox(id: &str, uid: &str, ready: bool, age_s: i64) -> cri::PodSandbox {
    let state = if ready {
        cri::PodSandboxState::SandboxReady
    } else {
        cri::PodSandboxState::SandboxNotready
    };
    cri::PodSandbox {
        id: id.to_owned(),
        state: state as i32,
        created_at: NOW - age_s * 1_000_000_000,
        labels: pod_labels(uid, NODE),
        ..Default::default()
    }
}

fn policy(max_per_container: Option<usize>, max_containers: Option<usize>) -> Policy {
    Policy {
        minimum_age: Duration::ZERO,
        max_per_container,
        max_containers,
    }
}

fn upstream_defaults() -> Policy {
    Policy::of(&GarbageCollection::default())
}

fn run(
    containers: &[cri::Container],
    sandboxes: &[cri::PodSandbox],
    existing: Existing<'_>,
    policy: &Policy,
) -> Plan {
    let runtime = RuntimeObjects {
        containers,
        sandboxes,
    };
    plan(NODE, runtime, existing, policy, NOW)
}

fn ids(removals: &[super::Removal]) -> Vec<&str> {
    removals.iter().map(|r| r.id.as_str()).collect()
}

fn uids(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|u| (*u).to_owned()).collect()
}

/// The containers a pass removes when exactly the pods `known` exist (and no sandbox is
/// listed); sandbox decisions are checked through [`run`].
fn removed(containers: &[cri::Container], known: &[&str], policy: &Policy) -> Vec<String> {
    let known = uids(known);
    let plan = run(containers, &[], Existing::Only(&known), policy);
    assert!(plan.sandboxes.is_empty(), "{plan:?}");
    plan.containers.into_iter().map(|r| r.id).collect()
}

#[test]
fn the_configuration_maps_negative_limits_to_no_limit() {
    let policy = upstream_defaults();
    assert_eq!(policy.minimum_age, Duration::ZERO);
    assert_eq!(policy.max_per_container, Some(1));
    assert_eq!(policy.max_containers, None);
    let config = GarbageCollection {
        max_dead_per_container: -1,
        max_dead_containers: 7,
        ..GarbageCollection::default()
    };
    assert_eq!(Policy::of(&config).max_per_container, None);
    assert_eq!(Policy::of(&config).max_containers, Some(7));
}

#[test]
fn a_crash_loop_keeps_the_running_instance_and_the_newest_dead_one() {
    let containers = [
        container("c0", "p1", "app", EXITED, 40),
        container("c1", "p1", "app", EXITED, 30),
        container("c2", "p1", "app", EXITED, 20),
        container("c3", "p1", "app", RUNNING, 10),
    ];
    let known = uids(&["p1"]);
    let plan = run(
        &containers,
        &[],
        Existing::Only(&known),
        &upstream_defaults(),
    );
    assert_eq!(ids(&plan.containers), ["c0", "c1"], "oldest first");
    assert_eq!(
        plan.containers[0].what, "container \"app\" of pod ns/pod-p1 (p1)",
        "warnings name the object"
    );
}

#[test]
fn a_dead_newest_instance_is_kept_besides_the_dead_ones_the_limit_allows() {
    // Waiting out its back-off: the newest instance is dead and carries the restart count.
    let containers = [
        container("c0", "p1", "app", EXITED, 30),
        container("c1", "p1", "app", EXITED, 20),
        container("c2", "p1", "app", EXITED, 10),
    ];
    assert_eq!(removed(&containers, &["p1"], &upstream_defaults()), ["c0"]);
}

#[test]
fn the_newest_instance_survives_even_with_no_dead_ones_allowed() {
    let containers = [
        container("init", "p1", "prepare", EXITED, 60),
        container("old", "p1", "app", EXITED, 50),
        container("new", "p1", "app", RUNNING, 40),
    ];
    assert_eq!(
        removed(&containers, &["p1"], &policy(Some(0), Some(0))),
        ["old"],
        "the completed init container is its container's newest instance"
    );
}

#[test]
fn containers_younger_than_the_minimum_age_are_neither_removed_nor_counted() {
    let containers = [
        container("c0", "p1", "app", EXITED, 300),
        container("c1", "p1", "app", EXITED, 200),
        container("c2", "p1", "app", EXITED, 30),
        container("c3", "p1", "app", RUNNING, 10),
    ];
    let mut policy = upstream_defaults();
    policy.minimum_age = Duration::from_secs(60);
    assert_eq!(
        removed(&containers, &["p1"], &policy),
        ["c0"],
        "c2 is young and does not count against the limit, c1 is the one dead kept"
    );
}

#[test]
fn no_per_container_limit_keeps_every_dead_instance() {
    let containers = [
        container("c0", "p1", "app", EXITED, 30),
        container("c1", "p1", "app", EXITED, 20),
        container("c2", "p1", "app", RUNNING, 10),
    ];
    assert!(removed(&containers, &["p1"], &policy(None, None)).is_empty());
}

#[test]
fn a_gone_pod_loses_its_dead_containers_then_its_idle_sandboxes() {
    let containers = [
        container("init", "gone", "prepare", EXITED, 50),
        container("app", "gone", "app", EXITED, 40),
        container("starting", "gone", "other", CREATED, 30),
    ];
    let sandboxes = [
        sandbox("sb-gone", "gone", false, 60),
        sandbox("sb-older", "gone", false, 90),
    ];
    let known = uids(&["p1"]);
    let plan = run(
        &containers,
        &sandboxes,
        Existing::Only(&known),
        &policy(None, None),
    );
    assert_eq!(ids(&plan.containers), ["init", "app", "starting"]);
    assert_eq!(
        ids(&plan.sandboxes),
        ["sb-gone", "sb-older"],
        "every sandbox of a gone pod, once its containers go"
    );
    assert_eq!(plan.sandboxes[0].what, "sandbox of pod ns/pod-gone (gone)");
}

#[test]
fn a_gone_pod_keeps_what_still_runs() {
    let containers = [
        container("dead", "gone", "app", EXITED, 40),
        container("live", "gone", "side", RUNNING, 30),
    ];
    let sandboxes = [
        sandbox("sb-gone", "gone", false, 60),
        sandbox("sb-ready", "gone", true, 10),
    ];
    let known = BTreeSet::new();
    let plan = run(
        &containers,
        &sandboxes,
        Existing::Only(&known),
        &upstream_defaults(),
    );
    assert_eq!(ids(&plan.containers), ["dead"]);
    assert!(
        plan.sandboxes.is_empty(),
        "sb-gone still holds a running container and sb-ready is ready: {plan:?}"
    );
}

#[test]
fn before_the_sources_are_read_every_pod_counts_as_existing() {
    let containers = [
        container("c0", "maybe", "app", EXITED, 30),
        container("c1", "maybe", "app", EXITED, 20),
        container("c2", "maybe", "app", EXITED, 10),
    ];
    let sandboxes = [
        sandbox("sb-old", "maybe", false, 90),
        sandbox("sb-maybe", "maybe", false, 60),
    ];
    let plan = run(&containers, &sandboxes, Existing::All, &upstream_defaults());
    assert_eq!(
        ids(&plan.containers),
        ["c0"],
        "the per-container limit still applies"
    );
    assert_eq!(
        ids(&plan.sandboxes),
        ["sb-old"],
        "the newest sandbox is kept"
    );
}

#[test]
fn objects_of_other_nodes_and_unlabelled_ones_are_never_touched() {
    let mut foreign = container("theirs", "p9", "app", EXITED, 50);
    foreign.labels = pod_labels("p9", "node-b");
    foreign
        .labels
        .insert(labels::CONTAINER_NAME.to_owned(), "app".to_owned());
    let mut unlabelled = container("bare", "p9", "app", EXITED, 50);
    unlabelled.labels.clear();
    let mut their_sandbox = sandbox("sb-theirs", "p9", false, 50);
    their_sandbox.labels = pod_labels("p9", "node-b");
    let known = BTreeSet::new();
    let plan = run(
        &[foreign, unlabelled],
        &[their_sandbox],
        Existing::Only(&known),
        &upstream_defaults(),
    );
    assert_eq!(plan, Plan::default());
}

#[test]
fn the_node_limit_spreads_over_containers_then_takes_the_oldest() {
    let containers = [
        container("a0", "p1", "a", EXITED, 100),
        container("a1", "p1", "a", EXITED, 90),
        container("a2", "p1", "a", EXITED, 50),
        container("a3", "p1", "a", RUNNING, 5),
        container("b0", "p2", "b", EXITED, 80),
        container("b1", "p2", "b", EXITED, 70),
        container("b2", "p2", "b", RUNNING, 5),
    ];
    // Three dead may stay per container, one on the node: one per container first (a2 and
    // b1 stay), then the older of those two goes.
    assert_eq!(
        removed(&containers, &["p1", "p2"], &policy(Some(3), Some(1))),
        ["a0", "a1", "b0", "b1"]
    );
}

#[test]
fn the_node_limit_never_takes_a_newest_instance() {
    let containers = [
        container("a", "p1", "a", EXITED, 30),
        container("b", "p1", "b", EXITED, 20),
        container("c", "p2", "c", EXITED, 10),
    ];
    assert!(removed(&containers, &["p1", "p2"], &policy(Some(0), Some(0))).is_empty());
}

#[test]
fn an_existing_pod_keeps_its_newest_sandbox_and_those_with_containers() {
    let containers = [
        container("old-app", "p1", "app", EXITED, 200),
        container("app", "p1", "app", EXITED, 100),
    ];
    let mut in_old = containers[0].clone();
    in_old.pod_sandbox_id = "sb-1".to_owned();
    let mut in_middle = containers[1].clone();
    in_middle.pod_sandbox_id = "sb-2".to_owned();
    let sandboxes = [
        sandbox("sb-0", "p1", false, 400),
        sandbox("sb-1", "p1", false, 300),
        sandbox("sb-2", "p1", false, 150),
        sandbox("sb-3", "p1", false, 50),
    ];
    let known = uids(&["p1"]);
    let plan = run(
        &[in_old, in_middle],
        &sandboxes,
        Existing::Only(&known),
        &policy(Some(0), None),
    );
    assert_eq!(ids(&plan.containers), ["old-app"]);
    assert_eq!(
        ids(&plan.sandboxes),
        ["sb-1", "sb-0"],
        "sb-1 is emptied in the same pass; sb-2 holds the newest app; sb-3 is the newest"
    );
}

#[test]
fn instances_created_at_the_same_time_still_have_one_newest() {
    let containers = [
        container("x", "p1", "app", EXITED, 10),
        container("y", "p1", "app", EXITED, 10),
    ];
    assert_eq!(
        removed(&containers, &["p1"], &policy(Some(0), None)),
        ["x"],
        "the higher id counts as newer"
    );
}
