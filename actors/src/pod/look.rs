//! [`look_after`]: how a pod sync looks at the runtime again after carrying out a plan, from
//! what it changed ([`RuntimeChanges`], kept in its [`Progress`]). The look after a
//! container start is on the way to the status a watcher waits for, so it asks no more than
//! that change needs. A [`Look`] is what a status is reported from, and says when it was
//! taken, so a report never goes back to an older look.

use std::collections::BTreeMap;
use std::time::Instant;

use sergeant_messages::runtime_error::RuntimeError;

use super::observe::{observe, refresh};
use crate::runtime::RuntimePort;
use sergeant_core::runtime::PodRuntime;
use sergeant_core::status::Waiting;

/// What a sync's actions did to the pod's runtime objects, which decides how the look after
/// it is taken ([`look_after`]).
#[derive(Debug, Default)]
pub(super) enum RuntimeChanges {
    /// Nothing: the look it began with still holds.
    #[default]
    Unchanged,
    /// Only these containers (sandbox ID, container ID) were started.
    Started(Vec<(String, String)>),
    /// Something else: a container stopped or removed, a start that failed half-way.
    Other,
}

impl RuntimeChanges {
    /// Records that the container `container_id` was started in the sandbox `sandbox_id`.
    pub(super) fn started(&mut self, sandbox_id: String, container_id: String) {
        match self {
            RuntimeChanges::Unchanged => {
                *self = RuntimeChanges::Started(vec![(sandbox_id, container_id)]);
            }
            RuntimeChanges::Started(started) => started.push((sandbox_id, container_id)),
            RuntimeChanges::Other => {}
        }
    }
}

/// One look at the pod's runtime, the measurement a status is reported from.
#[derive(Debug, Clone)]
pub struct Look {
    /// What the runtime showed.
    pub runtime: PodRuntime,
    /// When the look was begun: what it shows was true at some moment after this.
    pub begun: Instant,
    /// Why containers that are not running wait, as the sync that looked found.
    pub waiting: BTreeMap<String, Waiting>,
    /// The termination messages of exited containers, by name.
    pub termination_messages: BTreeMap<String, String>,
}

impl Look {
    /// Whether this look may replace `reported` (the one behind the last report): it was
    /// begun no earlier. A sync's look, begun before a look taken while the sync ran, would
    /// otherwise bring back a container that has died since.
    #[must_use]
    pub fn supersedes(&self, reported: Option<&Look>) -> bool {
        reported.is_none_or(|last| self.begun >= last.begun)
    }
}

/// What a sync's actions did since its last look, and why containers wait.
#[derive(Debug, Default)]
pub(super) struct Progress {
    /// Why containers that are not running are waiting.
    pub(super) waiting: BTreeMap<String, Waiting>,
    /// What it changed in the runtime.
    pub(super) changes: RuntimeChanges,
    /// It reset the pod in place (`RestartAllContainers`): the next sync is due at once.
    pub(super) reset: bool,
    /// Why the in-place resize the pod asks for was not carried out, when it was not.
    pub(super) resize_error: Option<String>,
}

/// The pod's runtime state after actions taken from the look `before` (none when they
/// failed or did not run) and made `changes`: `before` itself when nothing changed, the
/// statuses of what it knew and started when it only started containers (one round trip, on
/// the way to the status a watcher waits for), and a full look otherwise.
///
/// # Errors
/// The runtime's error of any call.
pub(super) async fn look_after(
    port: &RuntimePort,
    uid: &str,
    before: Option<PodRuntime>,
    changes: RuntimeChanges,
) -> Result<PodRuntime, RuntimeError> {
    match (before, changes) {
        (Some(before), RuntimeChanges::Unchanged) => Ok(before),
        (Some(before), RuntimeChanges::Started(started)) => refresh(port, before, started).await,
        _ => observe(port, uid).await,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn look(begun: Instant) -> Look {
        Look {
            runtime: PodRuntime::default(),
            begun,
            waiting: BTreeMap::new(),
            termination_messages: BTreeMap::new(),
        }
    }

    #[test]
    fn only_a_look_begun_no_earlier_replaces_the_reported_one() {
        let first = Instant::now();
        let later = first + Duration::from_millis(5);
        assert!(look(first).supersedes(None));
        assert!(look(later).supersedes(Some(&look(first))));
        assert!(look(first).supersedes(Some(&look(first))));
        assert!(!look(first).supersedes(Some(&look(later))));
    }
}
