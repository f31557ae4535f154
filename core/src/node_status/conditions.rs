//! The node conditions sergeant owns — `MemoryPressure`, `DiskPressure`, `PIDPressure` (as
//! the eviction manager reports them) and `Ready` — as upstream's condition setters write
//! them: the heartbeat is stamped on every update, the transition time only when the status
//! flips. `Ready` needs the runtime's `NetworkReady` and, when sergeant's CNI check made one,
//! its verdict. Pure.

use std::collections::BTreeSet;

use super::facts::RuntimeHealth;
use crate::cni::NetworkReadiness;
use crate::eviction::signals::Pressure;
use k8s_openapi::api::core::v1::NodeCondition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// The condition type the scheduler and the node lifecycle controller read.
pub const READY: &str = "Ready";

/// Why the node is not ready, as upstream's runtime state reports it; `None` when it is. The
/// network is ready when the runtime says so and `cni`, the CNI adapter's verdict on the
/// configuration the runtime loads, does not say otherwise (`None`: no check was made, and the
/// runtime's word stands alone).
#[must_use]
pub fn not_ready_reason(health: &RuntimeHealth, cni: Option<&NetworkReadiness>) -> Option<String> {
    let mut errors = Vec::new();
    if !health.reachable {
        errors.push(if health.adapter.is_empty() {
            "container runtime status check may not have completed yet".to_owned()
        } else {
            "container runtime is down".to_owned()
        });
    } else {
        if !health.runtime_ready {
            errors.push(format!("container runtime not ready: {}", health.message));
        }
        if !health.network_ready {
            errors.push(format!(
                "container runtime network not ready: {}",
                health.message
            ));
        } else if let Some(cni) = cni.filter(|cni| !cni.ready) {
            errors.push(format!(
                "container runtime network not ready: NetworkReady=false reason:{} message:{}",
                cni.reason, cni.message
            ));
        }
    }
    match errors.len() {
        0 => None,
        1 => errors.pop(),
        _ => Some(format!("[{}]", errors.join(", "))),
    }
}

/// What a pressure condition says: `(status, reason, message)` as upstream's setters write
/// them, under pressure or not.
#[must_use]
pub fn pressure_condition(pressure: Pressure, under: bool) -> (&'static str, &'static str, String) {
    let (reason, message) = match (pressure, under) {
        (Pressure::Memory, false) => (
            "KubeletHasSufficientMemory",
            "kubelet has sufficient memory available",
        ),
        (Pressure::Memory, true) => (
            "KubeletHasInsufficientMemory",
            "kubelet has insufficient memory available",
        ),
        (Pressure::Disk, false) => ("KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        (Pressure::Disk, true) => ("KubeletHasDiskPressure", "kubelet has disk pressure"),
        (Pressure::Pid, false) => (
            "KubeletHasSufficientPID",
            "kubelet has sufficient PID available",
        ),
        (Pressure::Pid, true) => (
            "KubeletHasInsufficientPID",
            "kubelet has insufficient PID available",
        ),
    };
    (
        if under { "True" } else { "False" },
        reason,
        message.to_owned(),
    )
}

/// The conditions to report at `now`, given what the node object says (`previous`), the
/// runtime's health, the CNI verdict ([`not_ready_reason`]) and the pressure conditions the
/// eviction manager reports `True`.
#[must_use]
pub fn conditions(
    previous: &[NodeCondition],
    health: &RuntimeHealth,
    cni: Option<&NetworkReadiness>,
    pressure: &BTreeSet<Pressure>,
    now: &Time,
) -> Vec<NodeCondition> {
    let ready = match not_ready_reason(health, cni) {
        None => (
            "True",
            "KubeletReady",
            "kubelet is posting ready status".to_owned(),
        ),
        Some(reason) => ("False", "KubeletNotReady", reason),
    };
    Pressure::ALL
        .into_iter()
        .map(|p| {
            (
                p.condition_type(),
                pressure_condition(p, pressure.contains(&p)),
            )
        })
        .chain([(READY, ready)])
        .map(|(kind, (status, reason, message))| {
            let before = previous.iter().find(|c| c.type_ == kind);
            let transition = match before {
                Some(before) if before.status == status => before.last_transition_time.clone(),
                _ => Some(now.clone()),
            };
            NodeCondition {
                type_: kind.to_owned(),
                status: status.to_owned(),
                reason: Some(reason.to_owned()),
                message: Some(message),
                last_heartbeat_time: Some(now.clone()),
                last_transition_time: transition,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::jiff::Timestamp;

    fn at(second: i64) -> Time {
        Time(Timestamp::from_second(second).unwrap())
    }

    fn healthy() -> RuntimeHealth {
        RuntimeHealth {
            adapter: "cri".to_owned(),
            reachable: true,
            runtime_ready: true,
            network_ready: true,
            ..RuntimeHealth::default()
        }
    }

    fn ready(conditions: &[NodeCondition]) -> &NodeCondition {
        conditions.iter().find(|c| c.type_ == READY).unwrap()
    }

    #[test]
    fn a_healthy_runtime_makes_the_node_ready_and_no_pressure_is_reported() {
        let now = at(100);
        let all = conditions(&[], &healthy(), None, &BTreeSet::new(), &now);
        let kinds: Vec<&str> = all.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(
            kinds,
            ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]
        );
        let ready = ready(&all);
        assert_eq!(ready.status, "True");
        assert_eq!(ready.reason.as_deref(), Some("KubeletReady"));
        assert_eq!(
            ready.message.as_deref(),
            Some("kubelet is posting ready status")
        );
        assert!(all.iter().take(3).all(|c| c.status == "False"));
        assert_eq!(all[0].reason.as_deref(), Some("KubeletHasSufficientMemory"));
        assert_eq!(all[1].reason.as_deref(), Some("KubeletHasNoDiskPressure"));
        assert_eq!(all[2].reason.as_deref(), Some("KubeletHasSufficientPID"));
        assert!(all
            .iter()
            .all(|c| c.last_transition_time == Some(now.clone())));
    }

    #[test]
    fn the_transition_time_moves_only_when_the_status_flips() {
        let first = conditions(&[], &healthy(), None, &BTreeSet::new(), &at(100));
        let second = conditions(&first, &healthy(), None, &BTreeSet::new(), &at(110));
        assert_eq!(ready(&second).last_transition_time, Some(at(100)));
        assert_eq!(ready(&second).last_heartbeat_time, Some(at(110)));
        let down = RuntimeHealth {
            reachable: false,
            message: "connection refused".to_owned(),
            ..healthy()
        };
        let third = conditions(&second, &down, None, &BTreeSet::new(), &at(120));
        let ready = ready(&third);
        assert_eq!(ready.status, "False");
        assert_eq!(ready.reason.as_deref(), Some("KubeletNotReady"));
        assert_eq!(ready.message.as_deref(), Some("container runtime is down"));
        assert_eq!(ready.last_transition_time, Some(at(120)));
        assert_eq!(third[0].last_transition_time, Some(at(100)));
    }

    #[test]
    fn pressure_flips_its_condition_and_moves_only_its_transition_time() {
        let calm = conditions(&[], &healthy(), None, &BTreeSet::new(), &at(100));
        let memory = BTreeSet::from([Pressure::Memory]);
        let pressed = conditions(&calm, &healthy(), None, &memory, &at(110));
        assert_eq!(pressed[0].type_, "MemoryPressure");
        assert_eq!(pressed[0].status, "True");
        assert_eq!(
            pressed[0].reason.as_deref(),
            Some("KubeletHasInsufficientMemory")
        );
        assert_eq!(
            pressed[0].message.as_deref(),
            Some("kubelet has insufficient memory available")
        );
        assert_eq!(pressed[0].last_transition_time, Some(at(110)));
        assert_eq!(
            pressed[1].last_transition_time,
            Some(at(100)),
            "disk did not flip"
        );
        let still = conditions(&pressed, &healthy(), None, &memory, &at(120));
        assert_eq!(still[0].last_transition_time, Some(at(110)));
        let over = conditions(&still, &healthy(), None, &BTreeSet::new(), &at(130));
        assert_eq!(over[0].status, "False");
        assert_eq!(over[0].last_transition_time, Some(at(130)));
        let all = BTreeSet::from(Pressure::ALL);
        let every = conditions(&over, &healthy(), None, &all, &at(140));
        let reasons: Vec<&str> = every
            .iter()
            .take(3)
            .filter_map(|c| c.reason.as_deref())
            .collect();
        assert_eq!(
            reasons,
            [
                "KubeletHasInsufficientMemory",
                "KubeletHasDiskPressure",
                "KubeletHasInsufficientPID"
            ]
        );
    }

    #[test]
    fn every_reason_for_not_ready_is_named() {
        assert_eq!(
            not_ready_reason(&RuntimeHealth::default(), None).as_deref(),
            Some("container runtime status check may not have completed yet")
        );
        let no_network = RuntimeHealth {
            network_ready: false,
            message: "NetworkReady: NetworkPluginNotReady cni not initialized".to_owned(),
            ..healthy()
        };
        assert_eq!(
            not_ready_reason(&no_network, None).as_deref(),
            Some("container runtime network not ready: NetworkReady: NetworkPluginNotReady cni not initialized")
        );
        let neither = RuntimeHealth {
            runtime_ready: false,
            ..no_network
        };
        assert!(not_ready_reason(&neither, None)
            .unwrap()
            .starts_with("[container runtime not ready: "));
        assert_eq!(not_ready_reason(&healthy(), None), None);
    }

    #[test]
    fn a_broken_cni_config_makes_a_ready_runtime_network_not_ready() {
        let broken = NetworkReadiness::not_ready(
            "cni config not usable: 10-pods.conflist: plugins[0].type: no plugin binary \"nope\" in /opt/cni/bin".to_owned(),
        );
        assert_eq!(
            not_ready_reason(&healthy(), Some(&broken)).as_deref(),
            Some("container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni config not usable: 10-pods.conflist: plugins[0].type: no plugin binary \"nope\" in /opt/cni/bin")
        );
        let ready = ready(&conditions(
            &[],
            &healthy(),
            Some(&broken),
            &BTreeSet::new(),
            &at(1),
        ))
        .clone();
        assert_eq!(ready.status, "False");
        assert_eq!(ready.reason.as_deref(), Some("KubeletNotReady"));
        assert_eq!(
            not_ready_reason(&healthy(), Some(&NetworkReadiness::ready())),
            None
        );
        // The runtime's own word comes first: a network it calls not ready is named as it says.
        let no_network = RuntimeHealth {
            network_ready: false,
            message: "NetworkReady: NetworkPluginNotReady cni not initialized".to_owned(),
            ..healthy()
        };
        assert_eq!(
            not_ready_reason(&no_network, Some(&broken)),
            not_ready_reason(&no_network, None)
        );
        // A runtime that is down is down, whatever the files say.
        assert_eq!(
            not_ready_reason(&RuntimeHealth::default(), Some(&broken)).as_deref(),
            Some("container runtime status check may not have completed yet")
        );
    }
}
