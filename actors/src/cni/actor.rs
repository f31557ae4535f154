//! The [`CniAdapter`] actor: a check every [`PERIOD`] (the first at start), one at a time;
//! each verdict published on the feed, a change of verdict logged once, and what was checked
//! shown on `/debug/supervision`.

use std::time::Duration;

use actix::{Actor, ActorFutureExt, AsyncContext, Context, WrapFuture};
use sergeant_core::cni::NetworkReadiness;
use sergeant_supervisor::{failpoint, ChildEnv};
use tokio::sync::watch;
use tracing::Instrument;

use super::check::{check, Checked};
use super::locate::{locate, Location, Source};
use super::CniFeed;
use crate::config_feed::ConfigState;
use crate::runtime::RuntimePort;

/// How often the configuration is checked (the runtime adapter's health period).
const PERIOD: Duration = Duration::from_secs(5);
/// Fails a check on demand, for supervision tests.
const FAILPOINT: &str = "cni-adapter::check";

/// Judges the runtime's CNI configuration and publishes the verdict.
pub(super) struct CniAdapter {
    env: ChildEnv,
    port: RuntimePort,
    config: watch::Receiver<ConfigState>,
    verdict: CniFeed,
    /// A check is under way.
    busy: bool,
}

impl CniAdapter {
    /// An adapter asking the runtime through `port`, reading `--cni-conf-dir` from `config`
    /// and publishing on `verdict`.
    pub(super) fn new(
        env: &ChildEnv,
        port: RuntimePort,
        config: watch::Receiver<ConfigState>,
        verdict: CniFeed,
    ) -> Self {
        Self {
            env: env.clone(),
            port,
            config,
            verdict,
            busy: false,
        }
    }

    /// Starts a check unless one is under way.
    fn tick(&mut self, ctx: &mut Context<Self>) {
        if let Err(fault) = failpoint::check(FAILPOINT) {
            return self.env.fail(ctx, fault);
        }
        if std::mem::replace(&mut self.busy, true) {
            return;
        }
        let flag = self
            .config
            .borrow()
            .active
            .command_line
            .cni_conf_dir
            .clone();
        let port = self.port.clone();
        let work = async move {
            let (location, error) = locate(&port, flag).await;
            let checked = match location.conf_dir.clone() {
                Some((dir, _)) => {
                    let bins = location.bin_dirs.clone();
                    let read = tokio::task::spawn_blocking(move || check(&dir, &bins));
                    Some(read.await)
                }
                None => None,
            };
            (location, error.map(|e| e.to_string()), checked)
        };
        ctx.spawn(
            work.instrument(tracing::info_span!("cni-adapter"))
                .into_actor(self)
                .map(|(location, error, checked), act, _ctx| {
                    act.busy = false;
                    match checked {
                        None => act.no_verdict(error),
                        Some(Ok(checked)) => act.publish(&location, &checked, error),
                        Some(Err(unfinished)) => act
                            .env
                            .set_status(format!("check did not finish: {unfinished}")),
                    }
                }),
        );
    }

    /// Nobody names a directory: no verdict, and the runtime's word stands alone.
    fn no_verdict(&mut self, error: Option<String>) {
        let why = error.map_or_else(
            || {
                "neither --cni-conf-dir nor the runtime names a CNI configuration directory"
                    .to_owned()
            },
            |err| format!("the runtime was not asked where its CNI configuration is ({err})"),
        );
        self.set(None, "no verdict");
        self.env.set_status(format!(
            "no check made: {why}; NetworkReady is the runtime's alone"
        ));
    }

    /// Publishes a verdict and shows what was checked.
    fn publish(&mut self, location: &Location, checked: &Checked, error: Option<String>) {
        let Some((dir, source)) = &location.conf_dir else {
            return;
        };
        let named = match source {
            Source::Flag => "--cni-conf-dir",
            Source::Runtime => "named by the runtime",
        };
        let file = checked
            .file
            .as_deref()
            .map_or_else(String::new, |f| format!("{f}: "));
        let verdict = if checked.readiness.ready {
            "usable".to_owned()
        } else {
            format!("not ready: {}", checked.readiness.message)
        };
        let runtime = error.map_or_else(String::new, |err| format!("; {err}"));
        self.set(Some(checked.readiness.clone()), &dir.display().to_string());
        self.env.set_status(format!(
            "{} ({named}): {file}{verdict}; {}{runtime}",
            dir.display(),
            checked.binaries
        ));
    }

    /// Puts `now` on the feed, logging it once when it differs from the last verdict.
    fn set(&mut self, now: Option<NetworkReadiness>, dir: &str) {
        let changed = self.verdict.send_if_modified(|last| {
            if *last == now {
                return false;
            }
            *last = now.clone();
            true
        });
        if !changed {
            return;
        }
        match now {
            Some(NetworkReadiness {
                ready: false,
                reason,
                message,
            }) => {
                tracing::warn!(reason, "CNI network not ready: {message}");
            }
            Some(_) => tracing::info!("CNI network ready: the configuration in {dir} is usable"),
            None => {
                tracing::info!("CNI network: no check made; NetworkReady is the runtime's alone")
            }
        }
    }
}

impl Actor for CniAdapter {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.env.set_status("first check under way");
        self.tick(ctx);
        ctx.run_interval(PERIOD, Self::tick);
    }
}
