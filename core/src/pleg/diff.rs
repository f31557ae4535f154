//! Two relists in, lifecycle events out: the PLEG actor (`sergeant_actors::pleg`) keeps the
//! [`RuntimeView`] of its last relist and sends the pod manager the events between it and the
//! next one's.

use std::collections::BTreeMap;

use k8s_cri::v1 as cri;

use crate::labels;

/// What happened to one runtime object of a pod between two relists. The PLEG sends these to
/// the pod manager, which hands each to the pod's actor as a reason to sync.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LifecycleEvent {
    /// The pod the object belongs to (its `io.kubernetes.pod.uid` label).
    pub pod_uid: String,
    /// The container or sandbox id.
    pub id: String,
    /// What changed.
    pub kind: LifecycleEventKind,
}

/// The kinds of change the PLEG reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LifecycleEventKind {
    /// A container is running that was not before.
    ContainerStarted,
    /// A container stopped running.
    ContainerDied,
    /// A container is gone from the runtime.
    ContainerRemoved,
    /// A sandbox appeared, changed state, or disappeared.
    SandboxChanged,
}

/// The state PLEG remembers of one runtime object. A container's created, exited and unknown
/// states stay apart (as upstream's PLEG keeps them): a container that is created, starts and
/// exits between two relists still changes state, so its death is not missed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectState {
    /// A running container or a ready sandbox.
    Live,
    /// A container created and not started yet.
    Created,
    /// An exited container, or a not-ready sandbox.
    NotLive,
    /// A container whose state the runtime cannot name.
    Unknown,
}

/// What one relist saw: every managed object by id, with its pod and state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuntimeView {
    containers: BTreeMap<String, (String, ObjectState)>,
    sandboxes: BTreeMap<String, (String, ObjectState)>,
}

impl RuntimeView {
    /// The view of one relist's answers; objects without a pod UID label are not ours.
    #[must_use]
    pub fn new(containers: &[cri::Container], sandboxes: &[cri::PodSandbox]) -> Self {
        let uid = |labels: &std::collections::HashMap<String, String>| {
            labels.get(labels::POD_UID).cloned()
        };
        let containers = containers
            .iter()
            .filter_map(|c| {
                uid(&c.labels).map(|uid| (c.id.clone(), (uid, container_state(c.state))))
            })
            .collect();
        let sandboxes = sandboxes
            .iter()
            .filter_map(|s| {
                let live = s.state == cri::PodSandboxState::SandboxReady as i32;
                uid(&s.labels).map(|uid| (s.id.clone(), (uid, state(live))))
            })
            .collect();
        Self {
            containers,
            sandboxes,
        }
    }

    /// How many containers are running: `kubelet_running_containers`.
    #[must_use]
    pub fn running_containers(&self) -> usize {
        self.containers
            .values()
            .filter(|(_, s)| *s == ObjectState::Live)
            .count()
    }

    /// The events that turn `self` into `next`.
    #[must_use]
    pub fn events_to(&self, next: &RuntimeView) -> Vec<LifecycleEvent> {
        let mut events = Vec::new();
        for (id, (uid, now)) in &next.containers {
            let kind = match (self.containers.get(id).map(|(_, s)| *s), now) {
                (Some(before), now) if before == *now => continue,
                (_, ObjectState::Live) => LifecycleEventKind::ContainerStarted,
                (_, _) => LifecycleEventKind::ContainerDied,
            };
            events.push(event(uid, id, kind));
        }
        for (id, (uid, _)) in &self.containers {
            if !next.containers.contains_key(id) {
                events.push(event(uid, id, LifecycleEventKind::ContainerRemoved));
            }
        }
        for (id, (uid, now)) in &next.sandboxes {
            if self.sandboxes.get(id).map(|(_, s)| s) != Some(now) {
                events.push(event(uid, id, LifecycleEventKind::SandboxChanged));
            }
        }
        for (id, (uid, _)) in &self.sandboxes {
            if !next.sandboxes.contains_key(id) {
                events.push(event(uid, id, LifecycleEventKind::SandboxChanged));
            }
        }
        events
    }
}

/// The state of a container in CRI's `state` number.
fn container_state(cri_state: i32) -> ObjectState {
    match cri::ContainerState::try_from(cri_state) {
        Ok(cri::ContainerState::ContainerRunning) => ObjectState::Live,
        Ok(cri::ContainerState::ContainerCreated) => ObjectState::Created,
        Ok(cri::ContainerState::ContainerExited) => ObjectState::NotLive,
        _ => ObjectState::Unknown,
    }
}

fn state(live: bool) -> ObjectState {
    if live {
        ObjectState::Live
    } else {
        ObjectState::NotLive
    }
}

fn event(uid: &str, id: &str, kind: LifecycleEventKind) -> LifecycleEvent {
    LifecycleEvent {
        pod_uid: uid.to_owned(),
        id: id.to_owned(),
        kind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(id: &str, uid: &str, state: cri::ContainerState) -> cri::Container {
        cri::Container {
            id: id.into(),
            state: state as i32,
            labels: [(labels::POD_UID.to_owned(), uid.to_owned())].into(),
            ..Default::default()
        }
    }

    #[test]
    fn started_died_and_removed_containers_become_events_for_their_pod() {
        let running = cri::ContainerState::ContainerRunning;
        let exited = cri::ContainerState::ContainerExited;
        let before = RuntimeView::new(
            &[container("a", "p1", running), container("b", "p1", running)],
            &[],
        );
        let after = RuntimeView::new(
            &[container("a", "p1", exited), container("c", "p2", running)],
            &[],
        );
        let kinds: Vec<(String, String, LifecycleEventKind)> = before
            .events_to(&after)
            .into_iter()
            .map(|e| (e.pod_uid, e.id, e.kind))
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("p1".into(), "a".into(), LifecycleEventKind::ContainerDied),
                (
                    "p2".into(),
                    "c".into(),
                    LifecycleEventKind::ContainerStarted
                ),
                (
                    "p1".into(),
                    "b".into(),
                    LifecycleEventKind::ContainerRemoved
                ),
            ]
        );
        assert_eq!(after.running_containers(), 1);
        assert!(after.events_to(&after).is_empty(), "no change, no event");
    }

    #[test]
    fn a_container_that_started_and_exited_between_two_relists_died() {
        let created = RuntimeView::new(
            &[container("a", "p1", cri::ContainerState::ContainerCreated)],
            &[],
        );
        let exited = RuntimeView::new(
            &[container("a", "p1", cri::ContainerState::ContainerExited)],
            &[],
        );
        let kinds: Vec<LifecycleEventKind> = created
            .events_to(&exited)
            .into_iter()
            .map(|e| e.kind)
            .collect();
        assert_eq!(kinds, vec![LifecycleEventKind::ContainerDied]);
    }

    #[test]
    fn objects_without_a_pod_uid_are_not_ours() {
        let mut foreign = container("x", "p", cri::ContainerState::ContainerRunning);
        foreign.labels.clear();
        assert_eq!(RuntimeView::new(&[foreign], &[]), RuntimeView::default());
    }
}
