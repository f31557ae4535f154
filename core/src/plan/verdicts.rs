//! How the pod actor (`sergeant_actors::pod`) keeps the [`ProbeVerdicts`] its plans read, by
//! container instance: [`ProbeVerdicts::take`] a current result in,
//! [`ProbeVerdicts::forget_gone`] the instances that no longer run. A failed liveness or
//! startup probe is not acted on here: the next sync's plan kills the container for it.

use super::{FailedProbe, ProbeFailure, ProbeVerdicts};
use crate::probe::ProbeKind;
use crate::runtime::PodRuntime;

impl ProbeVerdicts {
    /// Takes in a result the probe set accepted as current and changed: the `kind` probe of the
    /// instance `container_id` now says `success`, or nothing (`None`) when the worker that
    /// reached the last verdict died.
    pub fn take(&mut self, container_id: &str, kind: ProbeKind, success: Option<bool>) {
        let id = container_id;
        let failed = match kind {
            ProbeKind::Liveness => FailedProbe::Liveness,
            ProbeKind::Startup => FailedProbe::Startup,
            ProbeKind::Readiness => return,
        };
        match success {
            Some(true) => {
                self.failed.remove(id);
                if failed == FailedProbe::Startup {
                    self.started.insert(id.to_owned());
                }
            }
            Some(false) => {
                let failure = ProbeFailure { probe: failed };
                self.failed.insert(id.to_owned(), failure);
                if failed == FailedProbe::Startup {
                    self.started.remove(id);
                }
            }
            // The worker died with its verdict: nothing is known until its successor's first
            // result, which is no failure to act on and no startup passed.
            None => {
                self.failed.remove(id);
                if failed == FailedProbe::Startup {
                    self.started.remove(id);
                }
            }
        }
    }

    /// Forgets the verdicts of instances `runtime` no longer shows running.
    pub fn forget_gone(&mut self, runtime: &PodRuntime) {
        let running = |id: &String| runtime.running().any(|c| &c.status.id == id);
        self.failed.retain(|id, _| running(id));
        self.started.retain(running);
    }
}

#[cfg(test)]
mod tests {
    use k8s_cri::v1 as cri;

    use super::*;
    use crate::runtime::ObservedContainer;

    #[test]
    fn liveness_and_startup_failures_are_kept_by_instance_and_readiness_is_not() {
        let mut verdicts = ProbeVerdicts::default();
        verdicts.take("c1", ProbeKind::Readiness, Some(false));
        assert_eq!(verdicts, ProbeVerdicts::default());
        verdicts.take("c1", ProbeKind::Startup, Some(true));
        verdicts.take("c1", ProbeKind::Liveness, Some(false));
        verdicts.take("c2", ProbeKind::Startup, Some(false));
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
        verdicts.take("c1", ProbeKind::Liveness, Some(true));
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
            verdicts.take(id, ProbeKind::Startup, Some(true));
            verdicts.take(id, ProbeKind::Liveness, Some(false));
        }
        verdicts.forget_gone(&runtime);
        assert_eq!(verdicts.started.iter().collect::<Vec<_>>(), ["up"]);
        assert_eq!(verdicts.failed.keys().collect::<Vec<_>>(), ["up"]);
    }

    #[test]
    fn a_dead_workers_lost_verdict_is_neither_a_failure_nor_a_passed_startup() {
        let mut verdicts = ProbeVerdicts::default();
        verdicts.take("c1", ProbeKind::Startup, Some(true));
        verdicts.take("c1", ProbeKind::Liveness, Some(false));
        for kind in [ProbeKind::Startup, ProbeKind::Liveness] {
            verdicts.take("c1", kind, None);
        }
        assert_eq!(verdicts, ProbeVerdicts::default());
    }
}
