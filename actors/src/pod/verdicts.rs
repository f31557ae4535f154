//! The probe verdicts a pod's plan reads ([`ProbeVerdicts`]), kept by the pod actor by
//! container instance: [`take`] a current result in, [`forget_gone`] the instances that no
//! longer run. A failed liveness or startup probe is not acted on here: the next sync's plan
//! kills the container for it.

use sergeant_core::plan::{FailedProbe, ProbeFailure, ProbeVerdicts};
use sergeant_core::runtime::PodRuntime;

use super::probe::{ProbeKind, ProbeResult};

/// Takes in a result the probe set accepted as current and changed.
pub fn take(verdicts: &mut ProbeVerdicts, result: &ProbeResult) {
    let id = &result.container_id;
    let failed = match result.kind {
        ProbeKind::Liveness => FailedProbe::Liveness,
        ProbeKind::Startup => FailedProbe::Startup,
        ProbeKind::Readiness => return,
    };
    match result.success {
        Some(true) => {
            verdicts.failed.remove(id);
            if failed == FailedProbe::Startup {
                verdicts.started.insert(id.clone());
            }
        }
        Some(false) => {
            let failure = ProbeFailure { probe: failed };
            verdicts.failed.insert(id.clone(), failure);
            if failed == FailedProbe::Startup {
                verdicts.started.remove(id);
            }
        }
        // The worker died with its verdict: nothing is known until its successor's first
        // result, which is no failure to act on and no startup passed.
        None => {
            verdicts.failed.remove(id);
            if failed == FailedProbe::Startup {
                verdicts.started.remove(id);
            }
        }
    }
}

/// Forgets the verdicts of instances `runtime` no longer shows running.
pub fn forget_gone(verdicts: &mut ProbeVerdicts, runtime: &PodRuntime) {
    let running = |id: &String| runtime.running().any(|c| &c.status.id == id);
    verdicts.failed.retain(|id, _| running(id));
    verdicts.started.retain(running);
}

#[cfg(test)]
mod tests {
    use super::*;
    use sergeant_core::runtime::ObservedContainer;
    use sergeant_messages::runtime::cri;

    fn result(id: &str, kind: ProbeKind, success: bool) -> ProbeResult {
        ProbeResult {
            container: "app".to_owned(),
            container_id: id.to_owned(),
            kind,
            success: Some(success),
            message: String::new(),
        }
    }

    #[test]
    fn liveness_and_startup_failures_are_kept_by_instance_and_readiness_is_not() {
        let mut verdicts = ProbeVerdicts::default();
        take(&mut verdicts, &result("c1", ProbeKind::Readiness, false));
        assert_eq!(verdicts, ProbeVerdicts::default());
        take(&mut verdicts, &result("c1", ProbeKind::Startup, true));
        take(&mut verdicts, &result("c1", ProbeKind::Liveness, false));
        take(&mut verdicts, &result("c2", ProbeKind::Startup, false));
        assert_eq!(verdicts.started.iter().collect::<Vec<_>>(), ["c1"]);
        let failed: Vec<(&str, FailedProbe)> = verdicts
            .failed
            .iter()
            .map(|(id, f)| (id.as_str(), f.probe))
            .collect();
        assert_eq!(
            failed,
            [("c1", FailedProbe::Liveness), ("c2", FailedProbe::Startup)]
        );
        take(&mut verdicts, &result("c1", ProbeKind::Liveness, true));
        assert!(!verdicts.failed.contains_key("c1"));
    }

    #[test]
    fn only_running_instances_keep_their_verdicts() {
        let instance = |id: &str, state: cri::ContainerState| ObservedContainer {
            sandbox_id: "s".to_owned(),
            status: cri::ContainerStatus {
                id: id.to_owned(),
                state: state as i32,
                ..Default::default()
            },
        };
        let runtime = PodRuntime {
            containers: vec![
                instance("up", cri::ContainerState::ContainerRunning),
                instance("down", cri::ContainerState::ContainerExited),
            ],
            ..PodRuntime::default()
        };
        let mut verdicts = ProbeVerdicts::default();
        for id in ["up", "down", "gone"] {
            take(&mut verdicts, &result(id, ProbeKind::Startup, true));
            take(&mut verdicts, &result(id, ProbeKind::Liveness, false));
        }
        forget_gone(&mut verdicts, &runtime);
        assert_eq!(verdicts.started.iter().collect::<Vec<_>>(), ["up"]);
        assert_eq!(verdicts.failed.keys().collect::<Vec<_>>(), ["up"]);
    }

    #[test]
    fn a_dead_workers_lost_verdict_is_neither_a_failure_nor_a_passed_startup() {
        let mut verdicts = ProbeVerdicts::default();
        take(&mut verdicts, &result("c1", ProbeKind::Startup, true));
        take(&mut verdicts, &result("c1", ProbeKind::Liveness, false));
        for kind in [ProbeKind::Startup, ProbeKind::Liveness] {
            let mut lost = result("c1", kind, true);
            lost.success = None;
            take(&mut verdicts, &lost);
        }
        assert_eq!(verdicts, ProbeVerdicts::default());
    }
}
