//! The config-watcher actor: re-reads the configuration file when it changes (polled) or on
//! SIGHUP, and publishes each valid change to the [`ConfigFeed`].
//!
//! A valid change is diffed field by field: fields that can change live are published for the
//! actors that own them (log verbosity is applied here), and fields that need a restart keep
//! their running values and are listed as restart-required. An invalid file changes nothing:
//! the error is logged, counted in `sergeant_config_reload_failures_total`, and shown at
//! `/debug/config`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use actix::{Actor, ActorFutureExt, AsyncContext, Context, Handler, Message, WrapFuture};
use sergeant_config::{diff, Apply, FlagOverrides, NodeConfig, Owner};

use crate::config_feed::{ConfigFeed, ReloadFailure, ReloadRecord};
use sergeant_core::time::rfc3339_millis;
use sergeant_supervisor::failpoint;
use sergeant_supervisor::ChildEnv;

/// Applies a new log verbosity; provided by `main`, which owns the log subscriber.
pub type VerbosityControl = Arc<dyn Fn(u32) -> Result<(), VerbosityError> + Send + Sync>;

/// Why a new log verbosity could not be applied: the log subscriber's own error, kept as it
/// is. Boxed, since `main` owns the subscriber and its type is not known here.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct VerbosityError(pub Box<dyn std::error::Error + Send + Sync>);

/// Why the configuration file could not be read for a reload (the running configuration
/// stays; the message is logged and shown at `/debug/config`).
#[derive(Debug, thiserror::Error)]
enum ReadError {
    /// The file could not be read.
    #[error("{}: cannot read: {source}", path.display())]
    Unreadable {
        /// The configuration file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The read on the blocking pool did not finish.
    #[error("{}: reading did not finish: {reason}", path.display())]
    Unfinished {
        /// The configuration file.
        path: PathBuf,
        /// tokio's words for the read's panic or cancellation: opaque.
        reason: String,
    },
}

/// How often the file is checked for changes.
const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// Watches the configuration file and publishes accepted changes.
pub struct ConfigWatcher {
    env: ChildEnv,
    path: PathBuf,
    flags: FlagOverrides,
    feed: ConfigFeed,
    verbosity: VerbosityControl,
    last_text: Option<String>,
}

impl ConfigWatcher {
    /// A watcher of `path`, re-applying the command-line `flags` on every reload.
    #[must_use]
    pub fn new(
        env: &ChildEnv,
        path: PathBuf,
        flags: FlagOverrides,
        feed: ConfigFeed,
        verbosity: VerbosityControl,
    ) -> Self {
        Self {
            env: env.clone(),
            path,
            flags,
            feed,
            verbosity,
            last_text: None,
        }
    }

    /// Takes the file's current text: ignores it when unchanged, otherwise validates, diffs
    /// and publishes it.
    fn consider(&mut self, text: Result<String, ReadError>) {
        let text = match text {
            Ok(text) => text,
            Err(error) => return self.reject(error.to_string()),
        };
        if self.last_text.as_deref() == Some(text.as_str()) {
            return;
        }
        self.last_text = Some(text.clone());
        let source = self.path.display().to_string();
        match NodeConfig::parse(&text, &source, &self.flags) {
            Ok(candidate) => self.accept(candidate),
            Err(err) => self.reject(err.to_string()),
        }
    }

    fn accept(&mut self, candidate: NodeConfig) {
        let current = self.feed.borrow().active.clone();
        let changes = diff(&current, &candidate);
        if changes.changes.is_empty() {
            self.feed.send_modify(|state| state.last_error = None);
            return;
        }
        let restart_required: Vec<String> = changes
            .changes
            .iter()
            .filter(|c| c.apply == Apply::RestartRequired)
            .map(|c| c.field.clone())
            .collect();
        let active = match current.adopt_live(&candidate, &changes) {
            Ok(active) => active,
            Err(err) => {
                return self.reject(format!(
                    "{}: cannot apply the change: {err}",
                    self.path.display()
                ))
            }
        };
        if changes
            .changes
            .iter()
            .any(|c| c.apply == Apply::Live(Owner::Logging))
        {
            if let Err(err) = (self.verbosity)(active.kubelet.logging.verbosity) {
                tracing::warn!("cannot apply the new log verbosity: {err}");
            }
        }
        for change in &changes.changes {
            let field = &change.field;
            match change.apply {
                Apply::Live(owner) => {
                    tracing::info!(field, %owner, "configuration changed: {field} applied live by {owner}");
                }
                Apply::RestartRequired => tracing::warn!(
                    field,
                    "configuration changed: {field} takes effect after a restart; the running value stays"
                ),
            }
        }
        for warning in active
            .warnings
            .iter()
            .filter(|w| !current.warnings.contains(w))
        {
            tracing::warn!("configuration: {warning}");
        }
        let applied = active != *current;
        self.feed.send_modify(|state| {
            if applied {
                state.generation += 1;
                state.active = Arc::new(active);
            }
            state.restart_required = restart_required;
            state.last_reload = Some(ReloadRecord {
                at: rfc3339_millis(SystemTime::now()),
                changes: changes.changes,
            });
            state.last_error = None;
        });
    }

    fn reject(&mut self, message: String) {
        tracing::error!(
            "configuration reload rejected, keeping the running configuration: {message}"
        );
        metrics::counter!("sergeant_config_reload_failures_total").increment(1);
        self.feed.send_modify(|state| {
            state.last_error = Some(ReloadFailure {
                at: rfc3339_millis(SystemTime::now()),
                message,
            });
        });
    }
}

/// Re-read the file now (the poll timer and SIGHUP send this).
#[derive(Debug, Clone, Copy)]
struct Reread;

impl Message for Reread {
    type Result = ();
}

impl Actor for ConfigWatcher {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        metrics::describe_counter!(
            "sergeant_config_reload_failures_total",
            "Configuration reloads rejected because the new file was invalid or unreadable."
        );
        self.env
            .set_status(format!("watching {}", self.path.display()));
        ctx.run_interval(POLL_INTERVAL, |_, ctx| ctx.notify(Reread));
        match crate::hangup::Hangups::listen() {
            Ok(mut hangups) => {
                let addr = ctx.address();
                ctx.spawn(
                    async move {
                        while hangups.recv().await.is_some() {
                            tracing::info!("SIGHUP: re-reading the configuration");
                            addr.do_send(Reread);
                        }
                    }
                    .into_actor(self),
                );
            }
            Err(err) => tracing::warn!("cannot listen for SIGHUP: {err}"),
        }
    }
}

impl Handler<Reread> for ConfigWatcher {
    type Result = ();

    fn handle(&mut self, _: Reread, ctx: &mut Context<Self>) {
        if let Err(fault) = failpoint::check("config-watcher::reread") {
            self.env.fail(ctx, fault);
            return;
        }
        let path = self.path.clone();
        let read = async move {
            let file = path.clone();
            match tokio::task::spawn_blocking(move || std::fs::read_to_string(&file)).await {
                Ok(Ok(text)) => Ok(text),
                Ok(Err(source)) => Err(ReadError::Unreadable { path, source }),
                Err(err) => Err(ReadError::Unfinished {
                    path,
                    reason: err.to_string(),
                }),
            }
        };
        ctx.wait(read.into_actor(self).map(|text, act, _| act.consider(text)));
    }
}
