//! What a supervisor remembers of one child across its incarnations — static or dynamic alike:
//! its state, the incarnation running now, its restarts, back-off, intensity window and last
//! failure, and how that shows in the tree.

use std::time::{Duration, Instant, SystemTime};

use actix::{Actor, Context, Running as ActorRunning};
use sergeant_core::time::rfc3339_millis;
use sergeant_messages::supervision::{ChildState, FailureRecord, Strategy, TreeNode};

use super::env::ChildEnv;
use super::policy::{Backoff, IntensityWindow, RestartPolicy};
use super::running::{JoinOutcome, Running};

/// One child's record, kept by its supervisor.
pub(super) struct Life {
    pub(super) env: ChildEnv,
    /// Changed only through [`Life::set_state`], which publishes it.
    state: ChildState,
    /// Counts incarnations, so the end of an old one is told from the end of the current one.
    pub(super) generation: u64,
    pub(super) running: Option<Running>,
    pub(super) restarts: u64,
    pub(super) window: IntensityWindow,
    pub(super) backoff: Backoff,
    pub(super) started_at: Instant,
    pub(super) last_failure: Option<FailureRecord>,
}

impl Life {
    /// The record of a child at `env`'s place, not started yet.
    pub(super) fn new(env: ChildEnv, policy: &RestartPolicy) -> Self {
        env.publish_state(ChildState::Restarting);
        Self {
            env,
            state: ChildState::Restarting,
            generation: 0,
            running: None,
            restarts: 0,
            window: IntensityWindow::new(policy),
            backoff: Backoff::new(policy),
            started_at: Instant::now(),
            last_failure: None,
        }
    }

    /// The record, its incarnations counted on from `first`: a dynamic supervisor gives each
    /// life under a name its own range, so the end of an incarnation of a child stopped on
    /// purpose is never taken for the end of the one started again under its name.
    pub(super) fn counting_from(mut self, first: u64) -> Self {
        self.generation = first;
        self
    }

    /// Takes `running` as the current incarnation; returns its generation.
    pub(super) fn started(&mut self, running: Running) -> u64 {
        self.generation += 1;
        self.running = Some(running);
        self.set_state(ChildState::Running);
        self.started_at = Instant::now();
        self.generation
    }

    /// Where the child is in its life.
    pub(super) fn state(&self) -> ChildState {
        self.state
    }

    /// Moves the child to `state` and publishes it for the health check.
    pub(super) fn set_state(&mut self, state: ChildState) {
        self.state = state;
        self.env.publish_state(state);
    }

    /// Whether the incarnation of `generation` that just ended was the current one and was not
    /// stopped on purpose (whoever stopped it is in charge then).
    pub(super) fn ended(&mut self, generation: u64) -> bool {
        if self.generation != generation || self.running.is_none() {
            return false;
        }
        self.running = None;
        true
    }

    /// Records the failure `outcome` of the incarnation that ended and returns its description.
    pub(super) fn failed(&mut self, outcome: &JoinOutcome) -> String {
        let message = match (outcome, self.env.exit_reason()) {
            (JoinOutcome::Panicked(message), _) => format!("panicked: {message}"),
            (_, Some(reason)) => format!("failed: {reason}"),
            (JoinOutcome::Stopped, None) => "stopped unexpectedly".to_owned(),
            (JoinOutcome::Aborted, None) => "aborted".to_owned(),
        };
        tracing::error!(child = self.env.path(), "child failed: {message}");
        self.last_failure = Some(FailureRecord {
            at: rfc3339_millis(SystemTime::now()),
            message: message.clone(),
        });
        message
    }

    /// Admits one more restart: the delay before it, or `None` past the intensity.
    pub(super) fn next_restart(&mut self) -> Option<Duration> {
        self.window
            .admit(Instant::now())
            .then(|| self.backoff.delay(self.started_at.elapsed()))
    }

    /// The reason given when this child is given up after `message`.
    pub(super) fn give_up_reason(&self, message: &str) -> String {
        format!(
            "gave up on {} after more than {}: {message}",
            self.env.path(),
            self.window.describe()
        )
    }

    /// The child as a node of the tree, without its own children.
    pub(super) fn node(&self, name: &str, strategy: Option<Strategy>) -> TreeNode {
        TreeNode {
            name: name.to_owned(),
            path: self.env.path().to_owned(),
            strategy,
            state: self.state,
            restarts: self.restarts,
            last_failure: self.last_failure.clone(),
            status: self.env.status(),
            isolated: false,
            children: Vec::new(),
        }
    }
}

/// Where a supervisor is in its own shutdown: it stops its children first, then itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Shutdown {
    /// Not shutting down.
    #[default]
    No,
    /// Stopping its children; it must not restart any.
    Draining,
    /// Every child stopped; the supervisor may stop.
    Drained,
}

impl Shutdown {
    /// Whether children must be left alone (stopping or stopped).
    pub(super) fn started(self) -> bool {
        self != Self::No
    }
}

/// A supervisor that stops its children before itself.
pub(super) trait Drains: Actor<Context = Context<Self>> {
    /// Where it is in its shutdown.
    fn shutdown(&mut self) -> &mut Shutdown;
    /// Stops every child, then sets [`Shutdown::Drained`] and stops the supervisor again.
    fn drain(&mut self, ctx: &mut Context<Self>);
}

/// What a [`Drains`] supervisor's `Actor::stopping` answers: keep running while its children
/// stop (starting the drain on the first call), stop once they have.
pub(super) fn stopping_after_children<S: Drains>(
    act: &mut S,
    ctx: &mut Context<S>,
) -> ActorRunning {
    match *act.shutdown() {
        Shutdown::Drained => ActorRunning::Stop,
        Shutdown::Draining => ActorRunning::Continue,
        Shutdown::No => {
            *act.shutdown() = Shutdown::Draining;
            act.drain(ctx);
            ActorRunning::Continue
        }
    }
}
