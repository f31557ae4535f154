//! What the agent writes over the status the API server holds: its own status, keeping the
//! conditions other components own (a readiness gate's, `DisruptionTarget`) — but not those
//! the kubelet raises only while something lasts (`PodResizeInProgress`, `PodResizePending`),
//! which go when it no longer raises them — and never taking a pod out of a terminal phase,
//! as upstream's status manager does. The status manager writes what [`merged`] returns.

use k8s_openapi::api::core::v1::PodStatus;

use super::conditions::WHILE_SO;

const TERMINAL: [&str; 2] = ["Succeeded", "Failed"];

/// The status to write, or `None` when `ours` would move a terminal pod back to a live phase
/// (a late report must never undo the end of a pod).
#[must_use]
pub fn merged(api: Option<&PodStatus>, ours: &PodStatus) -> Option<PodStatus> {
    let terminal = |s: &PodStatus| s.phase.as_deref().is_some_and(|p| TERMINAL.contains(&p));
    if api.is_some_and(terminal) && !terminal(ours) {
        return None;
    }
    let mut status = ours.clone();
    let theirs = api
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten();
    let mine: Vec<String> = status
        .conditions
        .iter()
        .flatten()
        .map(|c| c.type_.clone())
        .collect();
    let kept: Vec<_> = theirs
        .filter(|c| !WHILE_SO.contains(&c.type_.as_str()) && !mine.contains(&c.type_))
        .cloned()
        .collect();
    if !kept.is_empty() {
        status.conditions.get_or_insert_with(Vec::new).extend(kept);
    }
    Some(status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::PodCondition;

    fn status(phase: &str, conditions: &[(&str, &str)]) -> PodStatus {
        PodStatus {
            phase: Some(phase.to_owned()),
            conditions: Some(
                conditions
                    .iter()
                    .map(|(t, s)| PodCondition {
                        type_: (*t).to_owned(),
                        status: (*s).to_owned(),
                        ..PodCondition::default()
                    })
                    .collect(),
            ),
            ..PodStatus::default()
        }
    }

    #[test]
    fn others_conditions_are_kept_ours_replace_theirs() {
        let api = status(
            "Pending",
            &[("Ready", "False"), ("example.com/gate", "True")],
        );
        let ours = status("Running", &[("Ready", "True")]);
        assert_eq!(
            merged(Some(&api), &ours),
            Some(status(
                "Running",
                &[("Ready", "True"), ("example.com/gate", "True")]
            ))
        );
        assert_eq!(merged(None, &ours), Some(ours));
    }

    #[test]
    fn a_resize_condition_the_kubelet_no_longer_raises_goes() {
        let api = status(
            "Running",
            &[
                ("Ready", "True"),
                ("PodResizeInProgress", "True"),
                ("PodResizePending", "True"),
            ],
        );
        let ours = status("Running", &[("Ready", "True")]);
        assert_eq!(merged(Some(&api), &ours), Some(ours));
    }

    #[test]
    fn a_terminal_pod_stays_terminal() {
        let api = status("Succeeded", &[]);
        assert_eq!(merged(Some(&api), &status("Running", &[])), None);
        assert!(merged(Some(&api), &status("Failed", &[])).is_some());
    }
}
