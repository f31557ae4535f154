//! The supervision tree as data: what `/debug/supervision` shows and what supervisors answer
//! when asked for their subtree with [`GetTree`].

use actix::Message;
use serde::Serialize;

/// How a supervisor reacts when one of its children fails.
///
/// The names and meanings follow Erlang/OTP, which is where operators know them from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Restart only the child that failed.
    OneForOne,
    /// Restart the child that failed and every child started after it.
    RestForOne,
    /// Restart every child when any one fails.
    OneForAll,
}

/// Where a supervised child is in its life, as its supervisor sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChildState {
    /// Started and not known to have died.
    Running,
    /// Died or stopped for a sibling's restart; waiting out its backoff before it starts again.
    Restarting,
    /// Stopped on purpose (shutdown) and not coming back.
    Stopped,
    /// Failed more often than the restart intensity allows; its supervisor no longer restarts it.
    GaveUp,
}

/// One failure of a child, kept so an operator can see why it was restarted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailureRecord {
    /// When the failure was seen, RFC 3339 in UTC.
    pub at: String,
    /// What happened: the panic message, the error the actor exited with, or an unexpected stop.
    pub message: String,
}

/// One node of the live supervision tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TreeNode {
    /// The child's name under its supervisor (`pleg`, `runtime`, …).
    pub name: String,
    /// The full path from the root (`root/runtime/pleg`), used as the metrics label.
    pub path: String,
    /// The restart strategy, present only on supervisors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<Strategy>,
    /// The child's state.
    pub state: ChildState,
    /// How many times its supervisor has restarted it.
    pub restarts: u64,
    /// The most recent failure, if any.
    pub last_failure: Option<FailureRecord>,
    /// What the actor says about itself (for example that its job is not built yet).
    pub status: String,
    /// Whether its children's failures stay below it: true for a dynamic supervisor, whose
    /// children (pods, probe workers) are reported on what they serve — a pod that cannot run
    /// is the pod's trouble, not the node's.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub isolated: bool,
    /// The children, for a supervisor; empty for a worker.
    pub children: Vec<TreeNode>,
}

impl TreeNode {
    /// The node of a running dynamic supervisor at `path` (named after its last segment),
    /// saying `status`, whose children its caller fills in.
    #[must_use]
    pub fn dynamic(path: &str, status: String) -> Self {
        Self {
            name: path.rsplit('/').next().unwrap_or(path).to_owned(),
            path: path.to_owned(),
            strategy: None,
            state: ChildState::Running,
            restarts: 0,
            last_failure: None,
            status,
            isolated: true,
            children: Vec::new(),
        }
    }

    /// Whether this node or anything below it that is not [`isolated`](Self::isolated) is not
    /// running as it should: a child waiting to restart or given up. `/healthz` fails while
    /// the root is degraded.
    #[must_use]
    pub fn is_degraded(&self) -> bool {
        self.state != ChildState::Running
            || (!self.isolated && self.children.iter().any(TreeNode::is_degraded))
    }
}

/// Asks a supervisor for a snapshot of itself and everything below it.
#[derive(Debug, Clone, Copy, Default)]
pub struct GetTree {
    /// Leaves out what lives below the children of dynamic supervisors (each pod actor's probe
    /// workers), which costs a message to every pod actor and waits for the busiest: `/healthz`
    /// never counts those subtrees, `/debug/supervision` shows them.
    pub skip_isolated: bool,
}

impl Message for GetTree {
    type Result = TreeNode;
}

/// Told to the owner of a dynamic supervisor (the pod manager, a pod actor) when it gives a child
/// up past its restart intensity: the owner reports it while the supervisor waits to try again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildGaveUp {
    /// The child's key under its supervisor (a pod's UID, a probe's name).
    pub name: String,
    /// Why: the last failure and the intensity it exceeded.
    pub reason: String,
    /// How long until the supervisor starts it again.
    pub retry_after: std::time::Duration,
}

impl Message for ChildGaveUp {
    type Result = ();
}
