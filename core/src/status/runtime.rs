//! Reading the runtime's containers of a pod: which container of the spec each one is, and
//! which attempts are the latest and the one before.

use std::collections::BTreeMap;

use k8s_cri::v1 as cri;

use crate::labels;

/// The attempts of one container the runtime knows, newest first.
#[derive(Debug)]
pub(super) struct Attempts<'a> {
    /// The newest attempt: it gives the container's state and restart count.
    pub latest: &'a cri::ContainerStatus,
    /// The attempt before it, if the runtime still has it: it gives the last state.
    pub previous: Option<&'a cri::ContainerStatus>,
}

impl Attempts<'_> {
    /// Whether the newest attempt is running.
    pub fn is_running(&self) -> bool {
        state(self.latest) == cri::ContainerState::ContainerRunning
    }
}

/// The runtime's state of a container; a value this client does not know reads as unknown.
pub(super) fn state(container: &cri::ContainerStatus) -> cri::ContainerState {
    cri::ContainerState::try_from(container.state).unwrap_or(cri::ContainerState::ContainerUnknown)
}

/// How many times the container was restarted before this attempt: the annotation sergeant
/// wrote when it created it, or the CRI attempt number when the annotation is missing or bad.
pub(super) fn restart_count(container: &cri::ContainerStatus) -> i32 {
    container
        .annotations
        .get(labels::CONTAINER_RESTART_COUNT)
        .and_then(|count| count.parse::<i32>().ok())
        .filter(|count| *count >= 0)
        .unwrap_or_else(|| {
            let attempt = container.metadata.as_ref().map_or(0, |m| m.attempt);
            i32::try_from(attempt).unwrap_or(i32::MAX)
        })
}

/// The spec container a runtime container belongs to: its name label, else its CRI name.
fn spec_name(container: &cri::ContainerStatus) -> Option<&str> {
    container
        .labels
        .get(labels::CONTAINER_NAME)
        .map(String::as_str)
        .or_else(|| container.metadata.as_ref().map(|m| m.name.as_str()))
        .filter(|name| !name.is_empty())
}

/// The runtime's containers grouped by spec container name, each with its two newest attempts
/// (ordered by restart count, then creation time).
pub(super) fn index(containers: &[cri::ContainerStatus]) -> BTreeMap<&str, Attempts<'_>> {
    let mut by_name: BTreeMap<&str, Vec<&cri::ContainerStatus>> = BTreeMap::new();
    for container in containers {
        if let Some(name) = spec_name(container) {
            by_name.entry(name).or_default().push(container);
        }
    }
    by_name
        .into_iter()
        .filter_map(|(name, mut attempts)| {
            attempts.sort_by_key(|c| std::cmp::Reverse((restart_count(c), c.created_at)));
            let mut newest = attempts.into_iter();
            let latest = newest.next()?;
            Some((
                name,
                Attempts {
                    latest,
                    previous: newest.next(),
                },
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::testing::{exited, running};

    #[test]
    fn the_highest_restart_count_is_the_latest_attempt() {
        let containers = [exited("app", 0, 1), running("app", 2), exited("app", 1, 1)];
        let index = index(&containers);
        let app = &index["app"];
        assert_eq!(restart_count(app.latest), 2);
        assert_eq!(app.previous.map(restart_count), Some(1));
        assert!(app.is_running());
    }

    #[test]
    fn creation_time_breaks_a_restart_count_tie() {
        let mut older = exited("app", 3, 1);
        older.id = "older".into();
        older.created_at -= 1;
        let mut newer = exited("app", 3, 1);
        newer.id = "newer".into();
        let containers = [newer, older];
        let index = index(&containers);
        assert_eq!(index["app"].latest.id, "newer");
        assert_eq!(index["app"].previous.map(|c| c.id.as_str()), Some("older"));
    }

    #[test]
    fn containers_are_grouped_by_their_name_label() {
        let mut other = running("web", 0);
        other
            .labels
            .insert(labels::CONTAINER_NAME.into(), "sidecar".into());
        let containers = [running("app", 0), other];
        let index = index(&containers);
        assert_eq!(
            index.keys().copied().collect::<Vec<_>>(),
            ["app", "sidecar"]
        );
        assert!(index["app"].previous.is_none());
    }

    #[test]
    fn restart_count_falls_back_to_the_attempt() {
        let mut container = running("app", 4);
        container
            .annotations
            .remove(labels::CONTAINER_RESTART_COUNT);
        assert_eq!(restart_count(&container), 4);
        container
            .annotations
            .insert(labels::CONTAINER_RESTART_COUNT.into(), "bogus".into());
        assert_eq!(restart_count(&container), 4);
    }

    #[test]
    fn an_unknown_state_value_reads_as_unknown() {
        let mut container = running("app", 0);
        container.state = 42;
        assert_eq!(state(&container), cri::ContainerState::ContainerUnknown);
    }
}
