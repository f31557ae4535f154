//! How the pod manager reports a pod whose actor was given up ([`given_up`]): the status last
//! measured, with the reason and message saying so, and no longer Ready — nothing probes its
//! containers until the actor is back.

use sergeant_messages::pods::core::{Pod, PodStatus};

use crate::events::reason::FAILED_SYNC;
use sergeant_core::status::api_time;

/// The conditions that say whether the pod takes traffic.
const READINESS: [&str; 2] = ["Ready", "ContainersReady"];

/// `pod` (carrying its last reported status, if any) reported as not synced any more, with
/// `message` saying why and when it is tried again.
#[must_use]
pub fn given_up(pod: &Pod, message: &str) -> Pod {
    let mut reported = pod.clone();
    let status = reported.status.get_or_insert_with(PodStatus::default);
    status.reason = Some(FAILED_SYNC.to_owned());
    status.message = Some(message.to_owned());
    let now = api_time(std::time::SystemTime::now());
    for condition in status.conditions.iter_mut().flatten() {
        if READINESS.contains(&condition.type_.as_str()) && condition.status != "False" {
            condition.status = "False".to_owned();
            condition.reason = Some(FAILED_SYNC.to_owned());
            condition.message = Some(message.to_owned());
            condition.last_transition_time = Some(now.clone());
        }
    }
    let containers = [
        &mut status.container_statuses,
        &mut status.init_container_statuses,
    ];
    for container in containers.into_iter().flatten().flatten() {
        container.ready = false;
    }
    reported
}

#[cfg(test)]
mod tests {
    use super::*;
    use sergeant_messages::pods::core::{ContainerStatus, PodCondition};

    fn condition(type_: &str, status: &str) -> PodCondition {
        PodCondition {
            type_: type_.to_owned(),
            status: status.to_owned(),
            ..PodCondition::default()
        }
    }

    #[test]
    fn a_running_pod_keeps_its_phase_and_loses_its_readiness_with_the_reason() {
        let pod = Pod {
            status: Some(PodStatus {
                phase: Some("Running".to_owned()),
                conditions: Some(vec![
                    condition("PodScheduled", "True"),
                    condition("Ready", "True"),
                    condition("ContainersReady", "True"),
                ]),
                container_statuses: Some(vec![ContainerStatus {
                    name: "web".to_owned(),
                    ready: true,
                    ..ContainerStatus::default()
                }]),
                ..PodStatus::default()
            }),
            ..Pod::default()
        };
        let reported = given_up(&pod, "gave up; trying again in 60s");
        let status = reported.status.expect("a status");
        assert_eq!(status.phase.as_deref(), Some("Running"));
        assert_eq!(status.reason.as_deref(), Some("FailedSync"));
        assert_eq!(
            status.message.as_deref(),
            Some("gave up; trying again in 60s")
        );
        let conditions = status.conditions.expect("conditions");
        let of = |type_: &str| conditions.iter().find(|c| c.type_ == type_).cloned();
        assert_eq!(of("PodScheduled").map(|c| c.status), Some("True".into()));
        for type_ in READINESS {
            let condition = of(type_).expect("present");
            assert_eq!(condition.status, "False");
            assert_eq!(condition.reason.as_deref(), Some("FailedSync"));
            assert!(condition.last_transition_time.is_some());
        }
        let containers = status.container_statuses.expect("containers");
        assert!(!containers[0].ready);
    }

    #[test]
    fn a_pod_never_reported_gets_a_status_with_the_reason_alone() {
        let reported = given_up(&Pod::default(), "gave up");
        let status = reported.status.expect("a status");
        assert_eq!(status.reason.as_deref(), Some("FailedSync"));
        assert_eq!(status.phase, None);
        assert_eq!(status.conditions, None);
    }
}
