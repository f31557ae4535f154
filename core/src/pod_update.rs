//! Which changes of a running pod its pod actor must hear of: what the pod's containers,
//! volumes and deadline are made from (its spec — ephemeral containers added through their
//! subresource among it — labels and annotations), as upstream's pod
//! config tells an update from a mere status change, and the conditions of its readiness gates
//! (set by other clients through the status subresource), which decide its `Ready` (as
//! upstream reconciles a pod's readiness). Other status writes — sergeant's own, which bump the
//! resource version of every API pod — are not changes, nor are the annotations the agent puts
//! on a pod itself (its source, the time it was first seen), as upstream's pod config ignores
//! them. A new generation is a change even when the spec the actor runs stays: a resize the
//! node has not allocated leaves the allocated resources in place (`crate::allocation`), yet
//! the status must say which generation it observed. The pod manager asks [`changed`].

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Pod, PodCondition};

use crate::source::LOCAL_ANNOTATIONS;

/// Whether `desired` (the source's latest copy) differs from `running` (what the pod actor
/// has) in a way a sync acts on.
pub fn changed(running: &Arc<Pod>, desired: &Arc<Pod>) -> bool {
    if Arc::ptr_eq(running, desired) {
        return false;
    }
    let (old, new) = (&running.metadata, &desired.metadata);
    running.spec != desired.spec
        || old.generation != new.generation
        || old.labels != new.labels
        || own_annotations(running) != own_annotations(desired)
        || gate_conditions(running) != gate_conditions(desired)
}

/// `pod`'s annotations but those the agent puts on it (`LOCAL_ANNOTATIONS`).
fn own_annotations(pod: &Pod) -> BTreeMap<&str, &str> {
    pod.metadata
        .annotations
        .iter()
        .flatten()
        .filter(|(key, _)| !LOCAL_ANNOTATIONS.contains(&key.as_str()))
        .map(|(key, value)| (key.as_str(), value.as_str()))
        .collect()
}

/// The conditions of `pod`'s status whose types are its readiness gates, in status order
/// (none for a pod without gates): what another client sets and the pod's `Ready` waits on.
#[must_use]
pub fn gate_conditions(pod: &Pod) -> Vec<&PodCondition> {
    let gates: Vec<&str> = pod
        .spec
        .iter()
        .flat_map(|s| s.readiness_gates.iter().flatten())
        .map(|g| g.condition_type.as_str())
        .collect();
    if gates.is_empty() {
        return Vec::new();
    }
    pod.status
        .iter()
        .flat_map(|s| s.conditions.iter().flatten())
        .filter(|c| gates.contains(&c.type_.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Container, PodReadinessGate, PodSpec, PodStatus};

    fn pod() -> Pod {
        let mut pod = Pod::default();
        pod.metadata.name = Some("web".to_owned());
        pod.metadata.resource_version = Some("1".to_owned());
        pod.spec = Some(PodSpec {
            containers: vec![Container {
                name: "app".to_owned(),
                image: Some("app:1".to_owned()),
                ..Container::default()
            }],
            ..PodSpec::default()
        });
        pod
    }

    fn differs(edit: impl FnOnce(&mut Pod)) -> bool {
        let mut edited = pod();
        edit(&mut edited);
        changed(&Arc::new(pod()), &Arc::new(edited))
    }

    #[test]
    fn a_status_write_is_no_change() {
        assert!(!differs(|p| {
            p.metadata.resource_version = Some("2".to_owned());
            p.status = Some(PodStatus {
                phase: Some("Running".to_owned()),
                ..PodStatus::default()
            });
        }));
        let same = Arc::new(pod());
        assert!(!changed(&same, &same));
    }

    #[test]
    fn a_readiness_gates_condition_is_a_change_other_conditions_are_not() {
        let gated = |p: &mut Pod| {
            p.spec.as_mut().unwrap().readiness_gates = Some(vec![PodReadinessGate {
                condition_type: "example.com/feature-1".to_owned(),
            }]);
        };
        let with_condition = |type_: &str, status: &str| {
            let (type_, status) = (type_.to_owned(), status.to_owned());
            move |p: &mut Pod| {
                gated(p);
                p.status = Some(PodStatus {
                    conditions: Some(vec![PodCondition {
                        type_: type_.clone(),
                        status: status.clone(),
                        ..PodCondition::default()
                    }]),
                    ..PodStatus::default()
                });
            }
        };
        let mut running = pod();
        gated(&mut running);
        let running = Arc::new(running);
        let edited = |edit: &dyn Fn(&mut Pod)| {
            let mut pod = (*running).clone();
            edit(&mut pod);
            changed(&running, &Arc::new(pod))
        };
        assert!(edited(&with_condition("example.com/feature-1", "True")));
        assert!(!edited(&with_condition("Ready", "True")));
    }

    #[test]
    fn an_ephemeral_container_added_through_its_subresource_is_a_change() {
        use k8s_openapi::api::core::v1::EphemeralContainer;
        assert!(differs(|p| {
            p.metadata.generation = Some(2);
            p.spec.as_mut().unwrap().ephemeral_containers = Some(vec![EphemeralContainer {
                name: "debugger".to_owned(),
                image: Some("busybox".to_owned()),
                ..EphemeralContainer::default()
            }]);
        }));
    }

    #[test]
    fn an_image_a_deadline_labels_and_annotations_are_changes() {
        assert!(differs(|p| {
            p.spec.as_mut().unwrap().containers[0].image = Some("app:2".to_owned());
        }));
        assert!(differs(|p| {
            p.spec.as_mut().unwrap().active_deadline_seconds = Some(5);
        }));
        assert!(differs(|p| {
            p.metadata.labels = Some([("tier".to_owned(), "web".to_owned())].into());
        }));
        assert!(differs(|p| {
            p.metadata.annotations = Some([("note".to_owned(), "x".to_owned())].into());
        }));
    }

    /// A resize not allocated yet: the spec the actor runs keeps the allocated resources, the
    /// generation moves on.
    #[test]
    fn a_new_generation_is_a_change() {
        assert!(differs(|p| p.metadata.generation = Some(2)));
    }

    #[test]
    fn the_annotations_the_agent_puts_on_a_pod_are_no_change() {
        let annotated = |pairs: &[(&str, &str)]| {
            let mut pod = pod();
            pod.metadata.annotations = Some(
                pairs
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            );
            Arc::new(pod)
        };
        let seen = "kubernetes.io/config.seen";
        let running = annotated(&[(seen, "2027-01-01T00:00:00.000000000Z"), ("note", "x")]);
        // (desired annotations, whether that is a change)
        let cases: [(&[(&str, &str)], bool); 5] = [
            (
                &[(seen, "2027-01-02T00:00:00.000000000Z"), ("note", "x")],
                false,
            ),
            (&[("note", "x")], false),
            (
                &[("kubernetes.io/config.source", "api"), ("note", "x")],
                false,
            ),
            (
                &[(seen, "2027-01-01T00:00:00.000000000Z"), ("note", "y")],
                true,
            ),
            (&[(seen, "2027-01-01T00:00:00.000000000Z")], true),
        ];
        for (desired, change) in cases {
            assert_eq!(
                changed(&running, &annotated(desired)),
                change,
                "{desired:?}"
            );
        }
    }
}
