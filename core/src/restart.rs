//! Whether a container that exited runs again, as upstream decides with container restart
//! rules (KEP-5307, `ContainerRestartRules`, on by default in the pinned release): the
//! container's `restartPolicyRules` in order, the first whose exit codes match deciding; else
//! the container's own `restartPolicy`; else the pod's. The plan (what to start) and the pod
//! phase (whether anything will run again) both ask [`restarts_after_exit`].
//!
//! A `Restart` rule restarts the container that exited. A `RestartAllContainers` rule (KEP-5532,
//! `RestartAllContainersOnContainerExits`, beta and on in the pinned release) restarts it too,
//! with every other container of the pod: the pod is reset in place ([`restarts_all`] tells
//! such an exit; `crate::plan` carries the reset out), as upstream's `ContainerShouldRestart`
//! counts such a rule as a restart.

use k8s_openapi::api::core::v1::{Container, ContainerRestartRule, PodSpec};

/// The rule action that restarts the container that exited.
const RESTART: &str = "Restart";
/// The rule action that restarts every container of the pod, init containers included.
const RESTART_ALL: &str = "RestartAllContainers";

/// A restart policy, of the pod or of one container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestartPolicy {
    /// Restart every container that exits (the pod's default).
    Always,
    /// Restart containers that fail.
    OnFailure,
    /// Restart nothing.
    Never,
}

impl RestartPolicy {
    /// The policy a field names; `None` for a value the API would not accept.
    fn named(value: &str) -> Option<Self> {
        match value {
            "Always" => Some(Self::Always),
            "OnFailure" => Some(Self::OnFailure),
            "Never" => Some(Self::Never),
            _ => None,
        }
    }

    /// Whether a container that exited with `exit_code` runs again under this policy.
    #[must_use]
    pub fn restarts_after(self, exit_code: i32) -> bool {
        match self {
            Self::Always => true,
            Self::OnFailure => exit_code != 0,
            Self::Never => false,
        }
    }
}

/// The `restartPolicy` of a pod with `spec`; `Always` when it names none (or one the API would
/// not accept).
#[must_use]
pub fn pod_policy(spec: Option<&PodSpec>) -> RestartPolicy {
    spec.and_then(|s| s.restart_policy.as_deref())
        .and_then(RestartPolicy::named)
        .unwrap_or(RestartPolicy::Always)
}

/// The policy a run-to-completion container (a regular one, or a plain init container) of a
/// pod whose policy is `pod` follows: its own `restartPolicy` when it sets one, else the pod's.
/// Sidecars (init containers with `Always`) are not asked: they always run again.
#[must_use]
pub fn container_policy(pod: RestartPolicy, container: &Container) -> RestartPolicy {
    container
        .restart_policy
        .as_deref()
        .and_then(RestartPolicy::named)
        .unwrap_or(pod)
}

/// Whether `container` of a pod whose policy is `pod`, having exited with `exit_code`, runs
/// again.
#[must_use]
pub fn restarts_after_exit(pod: RestartPolicy, container: &Container, exit_code: i32) -> bool {
    match first_match(container, exit_code) {
        Some(rule) if rule.action == RESTART || rule.action == RESTART_ALL => true,
        _ => container_policy(pod, container).restarts_after(exit_code),
    }
}

/// Whether `container`, having exited with `exit_code`, restarts every container of its pod:
/// the first of its rules that matches the code says `RestartAllContainers`.
#[must_use]
pub fn restarts_all(container: &Container, exit_code: i32) -> bool {
    first_match(container, exit_code).is_some_and(|rule| rule.action == RESTART_ALL)
}

/// Whether some container of `spec` (init or regular) has a `RestartAllContainers` rule: only
/// such a pod carries the `AllContainersRestarting` condition.
#[must_use]
pub fn may_restart_all(spec: &PodSpec) -> bool {
    let init = spec.init_containers.iter().flatten();
    init.chain(&spec.containers).any(|c| {
        let mut rules = c.restart_policy_rules.iter().flatten();
        rules.any(|rule| rule.action == RESTART_ALL)
    })
}

/// The first of `container`'s rules whose exit codes match `exit_code`.
fn first_match(container: &Container, exit_code: i32) -> Option<&ContainerRestartRule> {
    let mut rules = container.restart_policy_rules.iter().flatten();
    rules.find(|rule| matches(rule, exit_code))
}

/// Whether `container` may ever run again after an exit: some rule restarts it (or the whole
/// pod), or its policy is not `Never`.
#[must_use]
pub fn may_restart(pod: RestartPolicy, container: &Container) -> bool {
    container_policy(pod, container) != RestartPolicy::Never
        || container
            .restart_policy_rules
            .iter()
            .flatten()
            .any(|rule| rule.action == RESTART || rule.action == RESTART_ALL)
}

/// Whether `rule`'s exit-code requirement holds for `exit_code` (a rule without one matches
/// nothing).
fn matches(rule: &ContainerRestartRule, exit_code: i32) -> bool {
    let Some(codes) = &rule.exit_codes else {
        return false;
    };
    let listed = codes.values.iter().flatten().any(|v| *v == exit_code);
    match codes.operator.as_str() {
        "In" => listed,
        "NotIn" => !listed,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ContainerRestartRuleOnExitCodes;

    fn spec(policy: &str) -> RestartPolicy {
        pod_policy(Some(&PodSpec {
            restart_policy: Some(policy.to_owned()),
            ..PodSpec::default()
        }))
    }

    fn container(policy: Option<&str>, rules: &[(&str, &str, &[i32])]) -> Container {
        Container {
            name: "main".to_owned(),
            restart_policy: policy.map(str::to_owned),
            restart_policy_rules: (!rules.is_empty()).then(|| {
                rules
                    .iter()
                    .map(|(action, operator, values)| ContainerRestartRule {
                        action: (*action).to_owned(),
                        exit_codes: Some(ContainerRestartRuleOnExitCodes {
                            operator: (*operator).to_owned(),
                            values: Some(values.to_vec()),
                        }),
                    })
                    .collect()
            }),
            ..Container::default()
        }
    }

    #[test]
    fn without_container_settings_the_pods_policy_decides() {
        let plain = container(None, &[]);
        for (policy, code, restarts) in [
            ("Always", 0, true),
            ("Always", 1, true),
            ("OnFailure", 0, false),
            ("OnFailure", 1, true),
            ("Never", 0, false),
            ("Never", 1, false),
        ] {
            assert_eq!(
                restarts_after_exit(spec(policy), &plain, code),
                restarts,
                "pod {policy}, exit {code}"
            );
        }
    }

    #[test]
    fn the_containers_own_policy_overrides_the_pods() {
        let never = container(Some("Never"), &[]);
        assert!(!restarts_after_exit(spec("Always"), &never, 1));
        assert!(!may_restart(spec("Always"), &never));
        let always = container(Some("Always"), &[]);
        assert!(restarts_after_exit(spec("Never"), &always, 1));
        assert!(may_restart(spec("Never"), &always));
        let on_failure = container(Some("OnFailure"), &[]);
        assert!(!restarts_after_exit(spec("Always"), &on_failure, 0));
        assert!(restarts_after_exit(spec("Never"), &on_failure, 2));
    }

    #[test]
    fn the_first_matching_rule_restarts_and_a_mismatch_falls_back_to_the_policy() {
        let rules = container(Some("Never"), &[("Restart", "In", &[42])]);
        assert!(restarts_after_exit(spec("Never"), &rules, 42));
        assert!(!restarts_after_exit(spec("Never"), &rules, 1));
        assert!(may_restart(spec("Never"), &rules));
        let not_in = container(Some("Never"), &[("Restart", "NotIn", &[0, 1])]);
        assert!(restarts_after_exit(spec("Never"), &not_in, 3));
        assert!(!restarts_after_exit(spec("Never"), &not_in, 1));
    }

    #[test]
    fn a_restart_all_rule_restarts_the_container_and_the_first_match_decides() {
        let all = container(
            Some("Never"),
            &[
                ("RestartAllContainers", "In", &[42]),
                ("Restart", "In", &[42, 7]),
            ],
        );
        assert!(restarts_after_exit(spec("Never"), &all, 42));
        assert!(
            restarts_all(&all, 42),
            "the first matching rule resets the pod"
        );
        assert!(restarts_after_exit(spec("Never"), &all, 7));
        assert!(
            !restarts_all(&all, 7),
            "a Restart rule restarts only its own"
        );
        assert!(!restarts_after_exit(spec("Never"), &all, 1));
        assert!(!restarts_all(&all, 1));
        let only_all = container(Some("Never"), &[("RestartAllContainers", "In", &[42])]);
        assert!(may_restart(spec("Never"), &only_all));
        let pod = |containers: Vec<Container>| PodSpec {
            containers,
            ..PodSpec::default()
        };
        assert!(may_restart_all(&pod(vec![container(None, &[]), only_all])));
        assert!(!may_restart_all(&pod(vec![container(
            Some("Never"),
            &[("Restart", "In", &[42])]
        )])));
        let in_init = PodSpec {
            init_containers: Some(vec![container(
                Some("Never"),
                &[("RestartAllContainers", "NotIn", &[0])],
            )]),
            ..pod(vec![container(None, &[])])
        };
        assert!(may_restart_all(&in_init));
    }
}
