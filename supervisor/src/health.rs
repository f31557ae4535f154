//! [`TreeHealth`]: the states of the static tree's children and the main loop's heartbeat,
//! kept where any thread can read them without a message.
//!
//! `/healthz` must answer in milliseconds while the main loop is busy (a burst of pod starts
//! queues hundreds of tasks on it); a question sent to the supervisors waits behind all of
//! them. So every supervisor writes its children's states here as they change, a ticker on
//! the main loop beats every second, and the health check reads both from its own thread: a
//! loop that stops beating is told as stalled, as upstream's sync-loop check does.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use sergeant_messages::supervision::ChildState;

/// How often the main loop beats.
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(1);

/// The health of the tree, shared by the supervisors (writers) and the health check (reader).
///
/// Only children of static supervisors are kept: what a dynamic supervisor runs (pods, probe
/// workers) is reported on what it serves, never as the node's trouble. Cloning shares it.
#[derive(Debug, Clone)]
pub struct TreeHealth {
    inner: Arc<Mutex<Board>>,
}

#[derive(Debug)]
struct Board {
    states: BTreeMap<String, ChildState>,
    last_beat: Instant,
}

impl Default for TreeHealth {
    fn default() -> Self {
        Self::new()
    }
}

impl TreeHealth {
    /// An empty board whose loop beat just now.
    #[must_use]
    pub fn new() -> Self {
        Self {
            inner: Arc::new(Mutex::new(Board {
                states: BTreeMap::new(),
                last_beat: Instant::now(),
            })),
        }
    }

    fn board(&self) -> std::sync::MutexGuard<'_, Board> {
        // A writer never panics while holding the lock; if one did, the map is still whole.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records that the child at `path` is now in `state`.
    pub fn set(&self, path: &str, state: ChildState) {
        self.board().states.insert(path.to_owned(), state);
    }

    /// Records that the main loop ran just now.
    pub fn beat(&self) {
        self.board().last_beat = Instant::now();
    }

    /// How long ago the main loop last beat.
    #[must_use]
    pub fn since_last_beat(&self) -> Duration {
        self.board().last_beat.elapsed()
    }

    /// The deepest children that are not running, each as "`path` is `state`": a child
    /// whose supervisor is not running is not shown, as the supervisor is.
    #[must_use]
    pub fn degraded(&self) -> Vec<String> {
        let board = self.board();
        let down = |path: &str| {
            board
                .states
                .get(path)
                .is_some_and(|s| *s != ChildState::Running)
        };
        board
            .states
            .iter()
            .filter(|(path, state)| **state != ChildState::Running && !ancestors(path).any(&down))
            .map(|(path, state)| format!("{path} is {state:?}"))
            .collect()
    }
}

/// The paths above `path` (`root/a/b` → `root/a`, `root`).
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.char_indices()
        .rev()
        .filter(|(_, c)| *c == '/')
        .map(move |(at, _)| &path[..at])
}

#[cfg(test)]
mod tests {
    use super::*;
    use ChildState::{GaveUp, Restarting, Running, Stopped};

    fn board(entries: &[(&str, ChildState)]) -> TreeHealth {
        let health = TreeHealth::new();
        for (path, state) in entries {
            health.set(path, *state);
        }
        health
    }

    #[test]
    fn a_tree_of_running_children_is_healthy() {
        let health = board(&[("root/runtime", Running), ("root/runtime/pleg", Running)]);
        assert!(health.degraded().is_empty());
    }

    #[test]
    fn the_deepest_child_that_is_down_is_named() {
        let health = board(&[
            ("root/runtime", Running),
            ("root/runtime/pleg", GaveUp),
            ("root/server", Running),
            ("root/server/healthz", Restarting),
        ]);
        assert_eq!(
            health.degraded(),
            vec![
                "root/runtime/pleg is GaveUp".to_owned(),
                "root/server/healthz is Restarting".to_owned()
            ]
        );
    }

    #[test]
    fn children_of_a_supervisor_that_is_down_are_left_out() {
        // The children's last states are stale once their supervisor stopped.
        let health = board(&[
            ("root/runtime", Restarting),
            ("root/runtime/pleg", Stopped),
            ("root/runtime/runtime-adapter", Running),
        ]);
        assert_eq!(
            health.degraded(),
            vec!["root/runtime is Restarting".to_owned()]
        );
    }

    #[test]
    fn a_child_that_comes_back_is_healthy_again() {
        let health = board(&[("root/server/healthz", Restarting)]);
        health.set("root/server/healthz", Running);
        assert!(health.degraded().is_empty());
    }

    #[test]
    fn a_path_that_only_starts_like_another_is_not_below_it() {
        let health = board(&[("root/pod", Restarting), ("root/pods", GaveUp)]);
        assert_eq!(health.degraded().len(), 2);
    }

    #[test]
    fn ancestors_walk_up_to_the_root() {
        assert_eq!(
            ancestors("root/a/b").collect::<Vec<_>>(),
            vec!["root/a", "root"]
        );
        assert_eq!(ancestors("root").count(), 0);
    }

    #[test]
    fn a_beat_resets_the_time_since_the_last_one() {
        let health = TreeHealth::new();
        std::thread::sleep(Duration::from_millis(20));
        assert!(health.since_last_beat() >= Duration::from_millis(20));
        health.beat();
        assert!(health.since_last_beat() < Duration::from_millis(20));
    }
}
