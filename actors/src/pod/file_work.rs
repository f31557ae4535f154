//! [`run_file_work`]: where a pod sync's blocking file-system work runs.
//!
//! Starting a pod touches the node's file systems: its cgroup, its log directory, the
//! termination-message file, the managed `/etc/hosts`, its volumes. That work is small —
//! about half a millisecond per pod start, a few milliseconds at worst, measured with 110
//! pods starting at once — while handing it to tokio's blocking pool and back costs two thread
//! wake-ups, each 10–30 ms of scheduling wait when containerd and runc keep both cores of a
//! small node busy. So work that stays in places sergeant owns runs on the pod actor's own
//! thread; only work that reaches paths a pod spec names on the host (a `hostPath` volume,
//! possibly on a network file system that hangs) goes to the blocking pool, where a hang
//! blocks that pod alone. Removing a pod's directory, whose size has no bound, stays on the
//! blocking pool too ([`crate::pod::kill`]).
//!
//! Work that never leaves sergeant's own places (a container's files, the API-backed volumes'
//! refresh, termination messages) is simply called where it is needed; [`run_file_work`] is
//! for work whose reach depends on the pod: the sandbox setup with its volumes
//! ([`sergeant_core::volumes::VolumePlan::reach`]) and a container's subPath binds
//! ([`sergeant_core::volumes::sub_paths_reach`]).

use sergeant_core::volumes::Reach;

/// Blocking file work that did not finish: its task on the blocking pool panicked or was
/// cancelled. A type of its own so the pod's errors carry it (and count it as the node's
/// trouble, not the pod's); it is `Clone` like them, so the join error is kept as its text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} did not finish: {reason}")]
pub struct Unfinished {
    /// The work, e.g. `volume teardown`.
    pub what: &'static str,
    /// tokio's words for the panic (its message) or the cancellation: opaque text.
    pub reason: String,
}

impl Unfinished {
    /// `what` did not finish, for the `error` its blocking task ended with.
    #[must_use]
    pub fn of(what: &'static str, error: &tokio::task::JoinError) -> Self {
        Self {
            what,
            reason: error.to_string(),
        }
    }
}

/// Runs `work`, blocking file-system calls, on the thread its [`Reach`] calls for.
///
/// # Errors
///
/// Only for [`Reach::Host`]: [`Unfinished`] naming `what` when the blocking task panicked or
/// was cancelled.
pub async fn run_file_work<T, F>(reach: Reach, what: &'static str, work: F) -> Result<T, Unfinished>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    match reach {
        Reach::Own => Ok(work()),
        Reach::Host => tokio::task::spawn_blocking(work)
            .await
            .map_err(|e| Unfinished::of(what, &e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn own_work_runs_on_the_callers_thread_and_host_work_does_not() {
        let caller = std::thread::current().id();
        let own = run_file_work(Reach::Own, "own work", || std::thread::current().id())
            .await
            .unwrap();
        let host = run_file_work(Reach::Host, "host work", || std::thread::current().id())
            .await
            .unwrap();
        assert_eq!(own, caller);
        assert_ne!(host, caller);
    }

    #[tokio::test]
    async fn host_work_that_panics_is_an_error_naming_the_work() {
        let err = run_file_work(Reach::Host, "checking a host path", || -> () {
            panic!("the file system went away")
        })
        .await
        .unwrap_err();
        assert_eq!(err.what, "checking a host path");
        assert!(
            err.to_string()
                .starts_with("checking a host path did not finish"),
            "{err}"
        );
    }
}
