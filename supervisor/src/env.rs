//! What a child gets from its supervisor ([`ChildEnv`]): its place in the tree, a way to report
//! why it is exiting and to say what it is doing, and where its state is published for the
//! health check.

use std::fmt::Display;

use actix::ActorContext;
use sergeant_messages::supervision::ChildState;
use tokio::sync::watch;

use super::health::TreeHealth;

/// What a child gets from its supervisor: its identity, a way to report why it is exiting,
/// and a way to say what it is doing (shown on `/debug/supervision`).
#[derive(Debug, Clone)]
pub struct ChildEnv {
    path: String,
    exit: watch::Sender<Option<String>>,
    status: watch::Sender<String>,
    /// Where the child's state is published for the health check; `None` below a dynamic
    /// supervisor, whose children are not the node's health.
    health: Option<TreeHealth>,
}

impl ChildEnv {
    /// An environment for a child at `path` whose state is not published for the health
    /// check (an actor started by hand, or a test's).
    #[must_use]
    pub fn new(path: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            exit: watch::Sender::new(None),
            status: watch::Sender::new(String::new()),
            health: None,
        }
    }

    /// The environment of the root at `path`: the states of its static subtree are published
    /// to `health`.
    #[must_use]
    pub(crate) fn root(path: impl Into<String>, health: &TreeHealth) -> Self {
        Self {
            health: Some(health.clone()),
            ..Self::new(path)
        }
    }

    /// The child's full path in the tree (`root/runtime/pleg`).
    #[must_use]
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The child's own name, the last segment of its path.
    #[must_use]
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }

    /// The environment of a child of this one, published where this one is.
    #[must_use]
    pub(crate) fn child(&self, name: &str) -> Self {
        Self {
            health: self.health.clone(),
            ..self.isolated_child(name)
        }
    }

    /// The environment of a child of this one that is not published (a dynamic supervisor's).
    #[must_use]
    pub(crate) fn isolated_child(&self, name: &str) -> Self {
        Self::new(format!("{}/{name}", self.path))
    }

    /// Publishes that this child is now in `state`, where it is published at all.
    pub(crate) fn publish_state(&self, state: ChildState) {
        if let Some(health) = &self.health {
            health.set(&self.path, state);
        }
    }

    /// Stops the actor as failed with `reason`; its supervisor restarts it by policy.
    pub fn fail<C: ActorContext>(&self, ctx: &mut C, reason: impl Display) {
        self.exit.send_replace(Some(reason.to_string()));
        ctx.stop();
    }

    /// Says what the actor is doing, shown as its status in the supervision tree.
    pub fn set_status(&self, status: impl Into<String>) {
        self.status.send_replace(status.into());
    }

    /// The tracing span every poll of this actor runs in, carrying its identity.
    #[must_use]
    pub fn span(&self) -> tracing::Span {
        tracing::info_span!("actor", path = %self.path)
    }

    /// The failure reason the last incarnation reported, if it reported one.
    #[must_use]
    pub fn exit_reason(&self) -> Option<String> {
        self.exit.borrow().clone()
    }

    pub(crate) fn status(&self) -> String {
        self.status.borrow().clone()
    }

    pub(crate) fn clear_exit_reason(&self) {
        self.exit.send_replace(None);
    }
}
