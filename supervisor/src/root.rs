//! The top of the tree: what `main` starts, waits on, and shuts down.

use std::time::Duration;

use super::child::ChildSpec;
use super::env::ChildEnv;
use super::health::{TreeHealth, HEARTBEAT_INTERVAL};
use super::running::{JoinOutcome, Running};

/// How the root supervisor ended; `main` turns it into the process exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootExit {
    /// Shut down on request, every child stopped in order.
    Clean,
    /// The root gave up: a child failed past its restart intensity.
    GaveUp(String),
    /// The root itself panicked or had to be aborted.
    Crashed(String),
}

/// The running root supervisor.
pub struct RootHandle {
    env: ChildEnv,
    running: Running,
    heartbeat: tokio::task::JoinHandle<()>,
}

/// Starts the root of the tree from `spec` (a [`ChildSpec::supervisor`]) on the current
/// arbiter, publishing its static subtree's states and this loop's heartbeat to `health`.
#[must_use]
pub fn start_root(spec: &ChildSpec, health: &TreeHealth) -> RootHandle {
    let env = ChildEnv::root(spec.name(), health);
    let running = spec.start(env.clone());
    let beating = health.clone();
    let heartbeat = actix_rt::spawn(async move {
        let mut ticks = tokio::time::interval(HEARTBEAT_INTERVAL);
        loop {
            ticks.tick().await;
            beating.beat();
        }
    });
    RootHandle {
        env,
        running,
        heartbeat,
    }
}

impl RootHandle {
    /// Waits until the root ends by itself, which only happens when it gives up.
    pub async fn wait(&self) -> RootExit {
        let outcome = self.running.done().await;
        self.heartbeat.abort();
        classify(&outcome, self.env.exit_reason())
    }

    /// Stops the whole tree in reverse order; aborts past `deadline`.
    pub async fn shutdown(self, deadline: Duration) -> RootExit {
        let outcome = self.running.stop(deadline).await;
        self.heartbeat.abort();
        classify(&outcome, self.env.exit_reason())
    }
}

fn classify(outcome: &JoinOutcome, reason: Option<String>) -> RootExit {
    match (outcome, reason) {
        (JoinOutcome::Panicked(message), _) => RootExit::Crashed(format!("panicked: {message}")),
        (JoinOutcome::Aborted, _) => RootExit::Crashed("aborted past its shutdown deadline".into()),
        (JoinOutcome::Stopped, Some(reason)) => RootExit::GaveUp(reason),
        (JoinOutcome::Stopped, None) => RootExit::Clean,
    }
}
