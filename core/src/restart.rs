//! Whether a container that exited runs again, as upstream decides with container restart
//! rules (KEP-5307, `ContainerRestartRules`, on by default in the pinned release): the
//! container's `restartPolicyRules` in order, the first whose exit codes match deciding; else
//! the container's own `restartPolicy`; else the pod's. The plan (what to start) and the pod
//! phase (whether anything will run again) both ask [`restarts_after_exit`].
//!
//! Both behind feature gates ([`RestartGates`]): with `ContainerRestartRules` off, only the
//! pod's policy counts; with `RestartAllContainersOnContainerExits` off, a matching
//! `RestartAllContainers` rule falls back to the container's own policy, as upstream.
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

/// The kubelet feature gates that decide how restarts are read (from `featureGates`; both on
/// by default in the pinned release).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestartGates {
    /// `ContainerRestartRules`: a container's own `restartPolicy` and `restartPolicyRules`
    /// count; off, only the pod's policy does.
    pub container_rules: bool,
    /// `RestartAllContainersOnContainerExits`: a `RestartAllContainers` rule resets the pod;
    /// off, its match falls back to the container's own policy.
    pub restart_all: bool,
}

impl Default for RestartGates {
    fn default() -> Self {
        Self {
            container_rules: true,
            restart_all: true,
        }
    }
}

/// How a pod's containers restart: the pod's policy, read with the gates in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PodRestart {
    /// The pod's `restartPolicy`.
    pub policy: RestartPolicy,
    /// The gates in force.
    pub gates: RestartGates,
}

impl PodRestart {
    /// Whether a `RestartAllContainers` rule acts (both gates on).
    fn resets(self) -> bool {
        self.gates.container_rules && self.gates.restart_all
    }
}

/// The restart settings of a pod with `spec` under `gates`; its policy is `Always` when it
/// names none (or one the API would not accept).
#[must_use]
pub fn pod_policy(spec: Option<&PodSpec>, gates: RestartGates) -> PodRestart {
    let policy = spec
        .and_then(|s| s.restart_policy.as_deref())
        .and_then(RestartPolicy::named)
        .unwrap_or(RestartPolicy::Always);
    PodRestart { policy, gates }
}

/// The policy a run-to-completion container (a regular one, or a plain init container) of
/// `pod` follows: its own `restartPolicy` when it sets one (and container rules are on), else
/// the pod's. Sidecars (init containers with `Always`) are not asked: they always run again.
#[must_use]
pub fn container_policy(pod: PodRestart, container: &Container) -> RestartPolicy {
    if !pod.gates.container_rules {
        return pod.policy;
    }
    container
        .restart_policy
        .as_deref()
        .and_then(RestartPolicy::named)
        .unwrap_or(pod.policy)
}

/// Whether `container` of `pod`, having exited with `exit_code`, runs again.
#[must_use]
pub fn restarts_after_exit(pod: PodRestart, container: &Container, exit_code: i32) -> bool {
    match first_match(pod, container, exit_code) {
        Some(rule) if rule.action == RESTART => true,
        Some(rule) if rule.action == RESTART_ALL && pod.resets() => true,
        _ => container_policy(pod, container).restarts_after(exit_code),
    }
}

/// Whether `container` of `pod`, having exited with `exit_code`, restarts every container of
/// its pod: the first of its rules that matches the code says `RestartAllContainers` (and the
/// gates let it).
#[must_use]
pub fn restarts_all(pod: PodRestart, container: &Container, exit_code: i32) -> bool {
    pod.resets()
        && first_match(pod, container, exit_code).is_some_and(|rule| rule.action == RESTART_ALL)
}

/// Whether some container of `spec` (init or regular) has a `RestartAllContainers` rule that
/// the gates let act: only such a pod carries the `AllContainersRestarting` condition.
#[must_use]
pub fn may_restart_all(spec: &PodSpec, gates: RestartGates) -> bool {
    if !pod_policy(Some(spec), gates).resets() {
        return false;
    }
    let init = spec.init_containers.iter().flatten();
    init.chain(&spec.containers).any(|c| {
        let mut rules = c.restart_policy_rules.iter().flatten();
        rules.any(|rule| rule.action == RESTART_ALL)
    })
}

/// The first of `container`'s rules whose exit codes match `exit_code`; none when container
/// rules are off.
fn first_match(
    pod: PodRestart,
    container: &Container,
    exit_code: i32,
) -> Option<&ContainerRestartRule> {
    if !pod.gates.container_rules {
        return None;
    }
    let mut rules = container.restart_policy_rules.iter().flatten();
    rules.find(|rule| matches(rule, exit_code))
}

/// Whether `container` of `pod` may ever run again after an exit: some rule restarts it (or
/// the whole pod), or its policy is not `Never`.
#[must_use]
pub fn may_restart(pod: PodRestart, container: &Container) -> bool {
    let rules = || {
        pod.gates
            .container_rules
            .then_some(container.restart_policy_rules.iter().flatten())
            .into_iter()
            .flatten()
    };
    container_policy(pod, container) != RestartPolicy::Never
        || rules()
            .any(|rule| rule.action == RESTART || (rule.action == RESTART_ALL && pod.resets()))
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

    fn spec(policy: &str) -> PodRestart {
        pod_policy(
            Some(&PodSpec {
                restart_policy: Some(policy.to_owned()),
                ..PodSpec::default()
            }),
            RestartGates::default(),
        )
    }

    fn gated(policy: &str, container_rules: bool, restart_all: bool) -> PodRestart {
        PodRestart {
            gates: RestartGates {
                container_rules,
                restart_all,
            },
            ..spec(policy)
        }
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
            restarts_all(spec("Never"), &all, 42),
            "the first matching rule resets the pod"
        );
        assert!(restarts_after_exit(spec("Never"), &all, 7));
        assert!(
            !restarts_all(spec("Never"), &all, 7),
            "a Restart rule restarts only its own"
        );
        assert!(!restarts_after_exit(spec("Never"), &all, 1));
        assert!(!restarts_all(spec("Never"), &all, 1));
        let only_all = container(Some("Never"), &[("RestartAllContainers", "In", &[42])]);
        assert!(may_restart(spec("Never"), &only_all));
        let pod = |containers: Vec<Container>| PodSpec {
            containers,
            ..PodSpec::default()
        };
        let on = RestartGates::default();
        assert!(may_restart_all(
            &pod(vec![container(None, &[]), only_all]),
            on
        ));
        assert!(!may_restart_all(
            &pod(vec![container(Some("Never"), &[("Restart", "In", &[42])])]),
            on
        ));
        let in_init = PodSpec {
            init_containers: Some(vec![container(
                Some("Never"),
                &[("RestartAllContainers", "NotIn", &[0])],
            )]),
            ..pod(vec![container(None, &[])])
        };
        assert!(may_restart_all(&in_init, on));
    }

    #[test]
    fn with_container_rules_off_only_the_pods_policy_counts() {
        let own = container(Some("Never"), &[("Restart", "In", &[42])]);
        let off = gated("Always", false, true);
        assert!(
            restarts_after_exit(off, &own, 1),
            "its own Never is not read"
        );
        assert!(restarts_after_exit(off, &own, 42));
        let never_pod = gated("Never", false, true);
        assert!(
            !restarts_after_exit(never_pod, &own, 42),
            "its rule is not read"
        );
        assert!(!may_restart(never_pod, &own));
        let all = container(Some("Never"), &[("RestartAllContainers", "In", &[42])]);
        assert!(!restarts_all(never_pod, &all, 42));
        let pod = PodSpec {
            containers: vec![all],
            ..PodSpec::default()
        };
        assert!(!may_restart_all(&pod, never_pod.gates));
    }

    #[test]
    fn with_restart_all_off_its_rule_falls_back_to_the_containers_policy() {
        let all = container(
            Some("Never"),
            &[
                ("RestartAllContainers", "In", &[42]),
                ("Restart", "In", &[42]),
            ],
        );
        let off = gated("Always", true, false);
        assert!(!restarts_all(off, &all, 42));
        assert!(
            !restarts_after_exit(off, &all, 42),
            "the first match falls back to Never, not to the next rule"
        );
        let on_failure = container(Some("OnFailure"), &[("RestartAllContainers", "In", &[42])]);
        assert!(restarts_after_exit(off, &on_failure, 42));
        let only_all = container(Some("Never"), &[("RestartAllContainers", "In", &[42])]);
        assert!(!may_restart(off, &only_all));
        let pod = PodSpec {
            containers: vec![only_all],
            ..PodSpec::default()
        };
        assert!(!may_restart_all(&pod, off.gates));
    }
}
