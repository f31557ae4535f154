//! A container's `restartPolicy` and `restartPolicyRules`, as upstream validates them with
//! container restart rules on (KEP-5307): a policy of `Always`, `OnFailure` or `Never` on any
//! container (`Always` on an init container makes it a sidecar); rules only beside an explicit
//! policy, at most 20, each with a known action and an exit-code requirement of `In` or `NotIn`
//! over at most 255 values. Entry point: `Checks::restart_settings`.

use k8s_openapi::api::core::v1::Container;

use super::{Checks, RESTART_POLICIES};
use crate::located::FieldPath;

/// The most rules a container may have.
const MAX_RULES: usize = 20;
/// The most exit codes a rule may list.
const MAX_EXIT_CODES: usize = 255;
/// The actions a rule may take.
const ACTIONS: &[&str] = &["Restart", "RestartAllContainers"];
/// How a rule's exit codes are compared.
const OPERATORS: &[&str] = &["In", "NotIn"];

impl Checks<'_, '_> {
    /// Checks the restart settings of `container`, at `path`.
    pub(super) fn restart_settings(&mut self, container: &Container, path: &FieldPath) {
        if let Some(policy) = container.restart_policy.as_deref() {
            self.one_of(&path.key("restartPolicy"), policy, RESTART_POLICIES);
        }
        let Some(rules) = container.restart_policy_rules.as_deref() else {
            return;
        };
        let rules_path = path.key("restartPolicyRules");
        if container.restart_policy.is_none() && !rules.is_empty() {
            self.fail(
                &rules_path,
                "requires the container's restartPolicy to be set explicitly",
            );
        }
        if !self.at_most(&rules_path, rules.len(), MAX_RULES, "restart rules") {
            return;
        }
        for (index, rule) in rules.iter().enumerate() {
            let rule_path = rules_path.index(index);
            self.one_of(&rule_path.key("action"), &rule.action, ACTIONS);
            let Some(codes) = &rule.exit_codes else {
                self.fail(
                    &rule_path.key("exitCodes"),
                    "required: a rule needs exit codes",
                );
                continue;
            };
            let codes_path = rule_path.key("exitCodes");
            self.one_of(&codes_path.key("operator"), &codes.operator, OPERATORS);
            let values = codes.values.as_deref().unwrap_or_default();
            self.at_most(
                &codes_path.key("values"),
                values.len(),
                MAX_EXIT_CODES,
                "exit codes",
            );
        }
    }
}
