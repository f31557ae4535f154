//! Container garbage collection, decided: given the runtime's containers and sandboxes and the
//! pods that still exist, which containers and sandboxes one pass removes. Entry point: [`plan`].
//!
//! The policy is upstream's container GC (`--minimum-container-ttl-duration`,
//! `--maximum-dead-containers-per-container`, `--maximum-dead-containers`) with one guarantee
//! more: the newest instance of every container of a pod that still exists is never removed,
//! because the pod actor reads from it that an init container completed, the container's last
//! state and its restart count.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use k8s_cri::v1 as cri;
use sergeant_config::sergeant::GarbageCollection;

use crate::labels;

pub mod images;
pub mod log_dirs;

/// The limits a pass applies, from `garbageCollection` of the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// A dead container created less than this long ago is left alone.
    pub minimum_age: Duration,
    /// Dead instances kept per container of an existing pod besides its newest; `None`: all.
    pub max_per_container: Option<usize>,
    /// Dead containers kept on the node; `None`: no limit.
    pub max_containers: Option<usize>,
}

impl Policy {
    /// The policy the configuration asks for; a negative limit means no limit.
    #[must_use]
    pub fn of(config: &GarbageCollection) -> Self {
        Self {
            minimum_age: config.minimum_container_age.as_std(),
            max_per_container: usize::try_from(config.max_dead_per_container).ok(),
            max_containers: usize::try_from(config.max_dead_containers).ok(),
        }
    }
}

/// Which pods still exist, as the pod manager knows them.
#[derive(Debug, Clone, Copy)]
pub enum Existing<'a> {
    /// Not every pod source has been read yet: every pod counts as existing, so nothing a pod
    /// about to be adopted needs is removed.
    All,
    /// The sources are read: exactly these pod UIDs exist.
    Only(&'a BTreeSet<String>),
}

impl Existing<'_> {
    fn contains(self, uid: &str) -> bool {
        match self {
            Existing::All => true,
            Existing::Only(uids) => uids.contains(uid),
        }
    }
}

/// What the runtime holds: the answers of one container and one sandbox list.
#[derive(Debug, Clone, Copy)]
pub struct RuntimeObjects<'a> {
    /// Every listed container.
    pub containers: &'a [cri::Container],
    /// Every listed sandbox.
    pub sandboxes: &'a [cri::PodSandbox],
}

/// One object to remove, and how to name it in a warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    /// The runtime's id of the container or sandbox.
    pub id: String,
    /// What it is: `container "app" of pod ns/name (uid)` or `sandbox of pod ns/name (uid)`.
    pub what: String,
}

/// What one pass removes, in the order to remove it: containers oldest first, then sandboxes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Dead containers.
    pub containers: Vec<Removal>,
    /// Sandboxes that are not ready and hold no container.
    pub sandboxes: Vec<Removal>,
}

/// A container of this node, with the pod and container name it belongs to.
#[derive(Debug, Clone, Copy)]
struct Owned<'a> {
    container: &'a cri::Container,
    uid: &'a str,
    name: &'a str,
}

impl Owned<'_> {
    /// Orders instances by age: creation time, then id so equal times still sort one way.
    fn age_key(&self) -> (i64, &str) {
        (self.container.created_at, self.container.id.as_str())
    }

    fn removal(&self) -> Removal {
        Removal {
            id: self.container.id.clone(),
            what: format!(
                "container {:?} of pod {}",
                self.name,
                pod_name(&self.container.labels)
            ),
        }
    }
}

/// The pod UID of an object this node's sergeant made; `None` for anything else.
fn owner<'a>(object_labels: &'a HashMap<String, String>, node: &str) -> Option<&'a str> {
    (object_labels.get(labels::NODE).map(String::as_str) == Some(node))
        .then(|| object_labels.get(labels::POD_UID).map(String::as_str))
        .flatten()
}

/// `ns/name (uid)` from an object's labels, for warnings.
fn pod_name(object_labels: &HashMap<String, String>) -> String {
    let get = |key| object_labels.get(key).map_or("?", String::as_str);
    format!(
        "{}/{} ({})",
        get(labels::POD_NAMESPACE),
        get(labels::POD_NAME),
        get(labels::POD_UID)
    )
}

/// Decides what a pass removes from `runtime` on node `node`; `now_ns` is the time of the
/// lists in nanoseconds since the Unix epoch, the unit of CRI's `created_at`.
#[must_use]
pub fn plan(
    node: &str,
    runtime: RuntimeObjects<'_>,
    existing: Existing<'_>,
    policy: &Policy,
    now_ns: i64,
) -> Plan {
    let containers = dead_containers(node, runtime.containers, existing, policy, now_ns);
    let removed: BTreeSet<&str> = containers.iter().map(|r| r.id.as_str()).collect();
    let sandboxes = idle_sandboxes(node, runtime, existing, &removed);
    Plan {
        containers,
        sandboxes,
    }
}

/// The dead containers to remove, oldest first.
fn dead_containers(
    node: &str,
    containers: &[cri::Container],
    existing: Existing<'_>,
    policy: &Policy,
    now_ns: i64,
) -> Vec<Removal> {
    let owned: Vec<Owned<'_>> = containers
        .iter()
        .filter_map(|container| {
            let uid = owner(&container.labels, node)?;
            let name = container
                .labels
                .get(labels::CONTAINER_NAME)
                .or(container.metadata.as_ref().map(|m| &m.name))?;
            Some(Owned {
                container,
                uid,
                name,
            })
        })
        .collect();
    let mut newest: BTreeMap<(&str, &str), Owned<'_>> = BTreeMap::new();
    for instance in owned.iter().filter(|o| existing.contains(o.uid)) {
        let slot = newest
            .entry((instance.uid, instance.name))
            .or_insert(*instance);
        if instance.age_key() > slot.age_key() {
            *slot = *instance;
        }
    }
    let young_since =
        now_ns.saturating_sub(i64::try_from(policy.minimum_age.as_nanos()).unwrap_or(i64::MAX));
    let mut units: BTreeMap<(&str, &str), Vec<Owned<'_>>> = BTreeMap::new();
    for instance in owned {
        let protected = newest
            .get(&(instance.uid, instance.name))
            .is_some_and(|n| n.container.id == instance.container.id);
        let running = instance.container.state == cri::ContainerState::ContainerRunning as i32;
        if !protected && !running && instance.container.created_at <= young_since {
            units
                .entry((instance.uid, instance.name))
                .or_default()
                .push(instance);
        }
    }
    for unit in units.values_mut() {
        unit.sort_by(|a, b| b.age_key().cmp(&a.age_key()));
    }
    let mut remove: Vec<Owned<'_>> = Vec::new();
    units.retain(|(uid, _), unit| {
        let gone = !existing.contains(uid);
        if gone {
            remove.append(unit);
        }
        !gone
    });
    if let Some(keep) = policy.max_per_container {
        trim_each(&mut units, keep, &mut remove);
    }
    if let Some(max) = policy.max_containers {
        trim_node(&mut units, max, &mut remove);
    }
    remove.sort_by(|a, b| a.age_key().cmp(&b.age_key()));
    remove.iter().map(Owned::removal).collect()
}

/// Keeps the newest `keep` instances of each unit, moving the rest to `remove`.
fn trim_each<'a>(
    units: &mut BTreeMap<(&'a str, &'a str), Vec<Owned<'a>>>,
    keep: usize,
    remove: &mut Vec<Owned<'a>>,
) {
    for unit in units.values_mut() {
        if unit.len() > keep {
            remove.extend(unit.drain(keep..));
        }
    }
}

/// Brings the dead containers of the node down to `max`: first evenly per unit (at least one
/// each), then the oldest of all.
fn trim_node<'a>(
    units: &mut BTreeMap<(&'a str, &'a str), Vec<Owned<'a>>>,
    max: usize,
    remove: &mut Vec<Owned<'a>>,
) {
    let total = |units: &BTreeMap<_, Vec<Owned<'a>>>| units.values().map(Vec::len).sum::<usize>();
    if units.is_empty() || total(units) <= max {
        return;
    }
    trim_each(units, (max / units.len()).max(1), remove);
    let excess = total(units).saturating_sub(max);
    if excess == 0 {
        return;
    }
    let mut rest: Vec<Owned<'a>> = std::mem::take(units).into_values().flatten().collect();
    rest.sort_by(|a, b| a.age_key().cmp(&b.age_key()));
    remove.extend(rest.drain(..excess));
}

/// The sandboxes to remove: not ready and holding no container that stays, all of them for
/// pods that are gone, all but the newest for pods that exist.
fn idle_sandboxes(
    node: &str,
    runtime: RuntimeObjects<'_>,
    existing: Existing<'_>,
    removed: &BTreeSet<&str>,
) -> Vec<Removal> {
    let occupied: BTreeSet<&str> = runtime
        .containers
        .iter()
        .filter(|c| !removed.contains(c.id.as_str()))
        .map(|c| c.pod_sandbox_id.as_str())
        .collect();
    let mut by_pod: BTreeMap<&str, Vec<&cri::PodSandbox>> = BTreeMap::new();
    for sandbox in runtime.sandboxes {
        if let Some(uid) = owner(&sandbox.labels, node) {
            by_pod.entry(uid).or_default().push(sandbox);
        }
    }
    let mut remove = Vec::new();
    for (uid, mut sandboxes) in by_pod {
        sandboxes.sort_by(|a, b| (b.created_at, &b.id).cmp(&(a.created_at, &a.id)));
        let skip = usize::from(existing.contains(uid));
        remove.extend(
            sandboxes
                .into_iter()
                .skip(skip)
                .filter(|s| s.state != cri::PodSandboxState::SandboxReady as i32)
                .filter(|s| !occupied.contains(s.id.as_str()))
                .map(|s| Removal {
                    id: s.id.clone(),
                    what: format!("sandbox of pod {}", pod_name(&s.labels)),
                }),
        );
    }
    remove
}

#[cfg(test)]
mod tests;
