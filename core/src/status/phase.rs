//! The pod phase, from the containers' statuses and their restart rules and policies.

use k8s_openapi::api::core::v1::{ContainerStatus, PodSpec};

use super::container::Kind;
use super::reset::removed_by_reset;
use crate::restart::{pod_policy, restarts_after_exit, RestartGates};

/// Not every container has started yet.
pub(super) const PENDING: &str = "Pending";
/// The containers have started and at least one runs or will run again.
pub(super) const RUNNING: &str = "Running";
/// Every container exited 0 and none will run again.
pub(super) const SUCCEEDED: &str = "Succeeded";
/// The containers are done and at least one failed, or the pod was refused.
pub(super) const FAILED: &str = "Failed";

/// How a container's status counts toward the phase.
enum Progress {
    Running,
    /// Exited with this code (now, or last time while it waits to restart); the second is
    /// true when a reset in place took it out, so it starts again whatever its policy.
    Exited(i32, bool),
    /// Has not run to an exit yet.
    NotStarted,
}

fn progress(status: &ContainerStatus) -> Progress {
    let state = status.state.as_ref();
    if state.is_some_and(|s| s.running.is_some()) {
        return Progress::Running;
    }
    let terminated = state
        .and_then(|s| s.terminated.as_ref())
        .or_else(|| status.last_state.as_ref()?.terminated.as_ref());
    terminated.map_or(Progress::NotStarted, |t| {
        Progress::Exited(t.exit_code, removed_by_reset(t))
    })
}

/// The pod's phase. `init` and `regular` hold one status per spec container, in spec order;
/// `terminal` says the pod is being deleted and nothing runs, so nothing will restart.
/// Sidecars never decide the phase. Whether an exited container runs again is its restart
/// rules' and policies' say (see [`crate::restart`]).
pub(super) fn of(
    spec: &PodSpec,
    init: &[(Kind, ContainerStatus)],
    regular: &[ContainerStatus],
    terminal: bool,
    gates: RestartGates,
) -> &'static str {
    let policy = pod_policy(Some(spec), gates);
    let init_specs = spec.init_containers.iter().flatten();
    let mut init_pending = false;
    let mut init_failed_for_good = false;
    for (container, (kind, status)) in init_specs.zip(init) {
        if *kind != Kind::Init {
            continue;
        }
        match progress(status) {
            Progress::Exited(0, _) => {}
            Progress::Exited(code, reset) => {
                let again = reset || restarts_after_exit(policy, container, code);
                init_failed_for_good |= terminal || !again;
            }
            Progress::Running | Progress::NotStarted => init_pending = true,
        }
    }
    if init_failed_for_good {
        return FAILED;
    }

    let (mut running, mut not_started, mut exited, mut succeeded, mut restarting) = (0, 0, 0, 0, 0);
    for (container, status) in spec.containers.iter().zip(regular) {
        match progress(status) {
            Progress::Running => running += 1,
            Progress::NotStarted => not_started += 1,
            Progress::Exited(code, reset) => {
                exited += 1;
                if code == 0 {
                    succeeded += 1;
                }
                if reset || restarts_after_exit(policy, container, code) {
                    restarting += 1;
                }
            }
        }
    }
    if terminal {
        return if exited > 0 && succeeded == regular.len() {
            SUCCEEDED
        } else {
            FAILED
        };
    }
    if init_pending || not_started > 0 || regular.is_empty() {
        return PENDING;
    }
    if running > 0 || restarting > 0 {
        RUNNING
    } else if succeeded == exited {
        SUCCEEDED
    } else {
        FAILED
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::testing::{container, exited, knowledge, observed, pod, running, sidecar};
    use crate::status::{compute, Waiting};

    fn phase_of(
        pod: &k8s_openapi::api::core::v1::Pod,
        containers: Vec<k8s_cri::v1::ContainerStatus>,
        knowledge: &crate::status::Knowledge,
    ) -> Option<String> {
        compute(pod, &observed(containers), knowledge).phase
    }

    #[test]
    fn pending_before_any_container_exists() {
        let pod = pod("Always", vec![], &["app"]);
        assert_eq!(
            phase_of(&pod, vec![], &knowledge()).as_deref(),
            Some(PENDING)
        );
    }

    #[test]
    fn pending_while_init_containers_run() {
        let pod = pod("Always", vec![container("init")], &["app"]);
        let phase = phase_of(&pod, vec![running("init", 0)], &knowledge());
        assert_eq!(phase.as_deref(), Some(PENDING));
    }

    #[test]
    fn pending_while_one_container_never_started() {
        let pod = pod("Always", vec![], &["app", "web"]);
        let mut knowledge = knowledge();
        knowledge.waiting.insert(
            "web".into(),
            Waiting {
                reason: "ImagePullBackOff".into(),
                message: String::new(),
            },
        );
        let phase = phase_of(&pod, vec![running("app", 0)], &knowledge);
        assert_eq!(phase.as_deref(), Some(PENDING));
    }

    #[test]
    fn running_once_a_container_runs() {
        let pod = pod("Never", vec![container("init")], &["app", "job"]);
        let containers = vec![exited("init", 0, 0), running("app", 0), exited("job", 0, 0)];
        assert_eq!(
            phase_of(&pod, containers, &knowledge()).as_deref(),
            Some(RUNNING)
        );
    }

    #[test]
    fn running_while_crash_looping_under_always() {
        let pod = pod("Always", vec![], &["app"]);
        let mut knowledge = knowledge();
        knowledge.waiting.insert(
            "app".into(),
            Waiting {
                reason: "CrashLoopBackOff".into(),
                message: String::new(),
            },
        );
        let phase = phase_of(&pod, vec![exited("app", 3, 1)], &knowledge);
        assert_eq!(phase.as_deref(), Some(RUNNING));
    }

    #[test]
    fn exits_under_each_policy() {
        let cases = [
            ("Always", 0, RUNNING),
            ("Always", 1, RUNNING),
            ("OnFailure", 0, SUCCEEDED),
            ("OnFailure", 1, RUNNING),
            ("Never", 0, SUCCEEDED),
            ("Never", 1, FAILED),
        ];
        for (policy, code, expected) in cases {
            let pod = pod(policy, vec![], &["app"]);
            let phase = phase_of(&pod, vec![exited("app", 0, code)], &knowledge());
            assert_eq!(phase.as_deref(), Some(expected), "{policy} exit {code}");
        }
    }

    #[test]
    fn failed_when_one_of_several_fails_under_never() {
        let pod = pod("Never", vec![], &["a", "b"]);
        let phase = phase_of(
            &pod,
            vec![exited("a", 0, 0), exited("b", 0, 2)],
            &knowledge(),
        );
        assert_eq!(phase.as_deref(), Some(FAILED));
    }

    #[test]
    fn failed_init_container_fails_the_pod_only_under_never() {
        for (policy, expected) in [
            ("Never", FAILED),
            ("OnFailure", PENDING),
            ("Always", PENDING),
        ] {
            let pod = pod(policy, vec![container("init")], &["app"]);
            let phase = phase_of(&pod, vec![exited("init", 0, 1)], &knowledge());
            assert_eq!(phase.as_deref(), Some(expected), "{policy}");
        }
    }

    #[test]
    fn sidecars_do_not_keep_a_finished_pod_running() {
        let pod = pod("Never", vec![sidecar("proxy")], &["job"]);
        let containers = vec![running("proxy", 0), exited("job", 0, 0)];
        assert_eq!(
            phase_of(&pod, containers, &knowledge()).as_deref(),
            Some(SUCCEEDED)
        );
    }

    #[test]
    fn a_failed_sidecar_does_not_fail_the_pod() {
        let pod = pod("Never", vec![sidecar("proxy")], &["job"]);
        let containers = vec![exited("proxy", 0, 1), exited("job", 0, 0)];
        assert_eq!(
            phase_of(&pod, containers, &knowledge()).as_deref(),
            Some(SUCCEEDED)
        );
    }

    #[test]
    fn deletion_makes_a_stopped_pod_terminal_whatever_the_policy() {
        let mut knowledge = knowledge();
        knowledge.terminating = true;
        let pod = pod("Always", vec![], &["app"]);
        let ok = phase_of(&pod, vec![exited("app", 0, 0)], &knowledge);
        assert_eq!(ok.as_deref(), Some(SUCCEEDED));
        let killed = phase_of(&pod, vec![exited("app", 0, 137)], &knowledge);
        assert_eq!(killed.as_deref(), Some(FAILED));
        let never_ran = phase_of(&pod, vec![], &knowledge);
        assert_eq!(never_ran.as_deref(), Some(FAILED));
    }

    #[test]
    fn deletion_keeps_a_pod_running_while_a_container_still_runs() {
        let mut knowledge = knowledge();
        knowledge.terminating = true;
        let pod = pod("Always", vec![], &["app", "web"]);
        let phase = phase_of(
            &pod,
            vec![running("app", 0), exited("web", 0, 0)],
            &knowledge,
        );
        assert_eq!(phase.as_deref(), Some(RUNNING));
    }

    #[test]
    fn a_containers_own_policy_and_rules_decide_whether_the_pod_still_runs() {
        use k8s_openapi::api::core::v1::{ContainerRestartRule, ContainerRestartRuleOnExitCodes};
        let with = |pod_policy: &str, own: &str, restart_on: Option<i32>| {
            let mut pod = pod(pod_policy, vec![], &["app"]);
            let app = &mut pod.spec.as_mut().unwrap().containers[0];
            app.restart_policy = Some(own.to_owned());
            app.restart_policy_rules = restart_on.map(|code| {
                vec![ContainerRestartRule {
                    action: "Restart".to_owned(),
                    exit_codes: Some(ContainerRestartRuleOnExitCodes {
                        operator: "In".to_owned(),
                        values: Some(vec![code]),
                    }),
                }]
            });
            pod
        };
        for (case, pod, exit, expected) in [
            (
                "own Never in an Always pod",
                with("Always", "Never", None),
                1,
                FAILED,
            ),
            (
                "own Never, success",
                with("Always", "Never", None),
                0,
                SUCCEEDED,
            ),
            (
                "own Always in a Never pod",
                with("Never", "Always", None),
                1,
                RUNNING,
            ),
            (
                "a rule restarts it",
                with("Never", "Never", Some(42)),
                42,
                RUNNING,
            ),
            (
                "a rule does not match",
                with("Never", "Never", Some(42)),
                1,
                FAILED,
            ),
        ] {
            let phase = phase_of(&pod, vec![exited("app", 0, exit)], &knowledge());
            assert_eq!(phase.as_deref(), Some(expected), "{case}");
        }
    }
}
