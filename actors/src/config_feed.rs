//! The live configuration as every actor sees it: one published snapshot, replaced whole on
//! each accepted reload. The config-watcher is the only writer.

use std::sync::Arc;

use actix::{Actor, ActorStreamExt, Context, ContextFutureSpawner};

use serde::Serialize;
use sergeant_config::{FieldChange, NodeConfig};
use sergeant_core::spec::{NodeContext, SpecError};
use tokio::sync::watch;

/// What `/debug/config` shows: the configuration in force and the history of reloads.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigState {
    /// The file the configuration is read from.
    pub source: String,
    /// Increases by one with every accepted change.
    pub generation: u64,
    /// The configuration in force.
    pub active: Arc<NodeConfig>,
    /// Fields changed in the file that only take effect after a restart of sergeant; the
    /// active configuration keeps their running values.
    pub restart_required: Vec<String>,
    /// The last reload that changed something.
    pub last_reload: Option<ReloadRecord>,
    /// The last reload that was rejected; cleared by the next accepted one.
    pub last_error: Option<ReloadFailure>,
}

/// An accepted reload and what it changed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReloadRecord {
    /// When it was applied, RFC 3339.
    pub at: String,
    /// Each changed field and who applies it.
    pub changes: Vec<FieldChange>,
}

/// A rejected reload: the running configuration stayed as it was.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReloadFailure {
    /// When it was rejected, RFC 3339.
    pub at: String,
    /// The precise error (file, line, field, reason).
    pub message: String,
}

/// The writer side, held by the config-watcher.
pub type ConfigFeed = watch::Sender<ConfigState>;

/// Starts a feed with the configuration sergeant was started with.
#[must_use]
pub fn feed(source: String, initial: NodeConfig) -> ConfigFeed {
    watch::Sender::new(ConfigState {
        source,
        generation: 1,
        active: Arc::new(initial),
        restart_required: Vec::new(),
        last_reload: None,
        last_error: None,
    })
}

/// Why the node's settings for pods could not be read: the actors that need them fail with
/// it (their supervisor restarts them). Its Display is the reason in their failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeContextError {
    /// A setting cannot serve pods, or a node file could not be read.
    #[error(transparent)]
    Read(#[from] SpecError),
    /// The read on the blocking pool did not finish: tokio's words for its panic or
    /// cancellation, opaque.
    #[error("reading did not finish: {0}")]
    Unfinished(String),
}

/// The node's settings for pods under the configuration in force (its name, directories,
/// cgroups, measured memory), read on a blocking thread.
///
/// # Errors
/// [`NodeContextError`]: why they could not be read.
pub async fn node_context(
    config: &watch::Receiver<ConfigState>,
) -> Result<NodeContext, NodeContextError> {
    let active = config.borrow().active.clone();
    tokio::task::spawn_blocking(move || sergeant_host::node::node_context(&active))
        .await
        .map_err(|e| NodeContextError::Unfinished(e.to_string()))?
        .map_err(NodeContextError::from)
}

/// Calls `on_change` on the actor each time `feed` publishes a new value — for the
/// configuration, each accepted reload — until the feed closes (sergeant shutting down), when
/// the actor keeps what it has. This is how actors that apply fields live follow the feed, and
/// how any actor follows a watch feed it reacts to as a whole.
pub fn follow<A, T>(
    ctx: &mut Context<A>,
    feed: watch::Receiver<T>,
    on_change: fn(&mut A, &mut Context<A>),
) where
    A: Actor<Context = Context<A>>,
    T: Send + Sync + 'static,
{
    let changes = futures::stream::unfold(feed, |mut feed| async move {
        feed.changed().await.ok().map(|()| ((), feed))
    });
    actix::fut::wrap_stream::<_, A>(changes)
        .map(move |(), act, ctx| on_change(act, ctx))
        .finish()
        .spawn(ctx);
}
