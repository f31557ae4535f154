//! The `StaticPodSource` actor: keeps the file source's snapshot equal to what
//! `staticPodPath` holds. It rescans every `min(fileCheckFrequency, 1s)`, follows live changes
//! of `staticPodPath`, and publishes a new snapshot only when the set of pods or rejections
//! changed. A rejected manifest is logged once per change and never affects the others.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use actix::{
    Actor, ActorFutureExt, AsyncContext, Context, Handler, Message, SpawnHandle, WrapFuture,
};
use sergeant_config::NodeConfig;
use sergeant_messages::pods::core::Pod;
use sergeant_messages::pods::{PodSource, RejectedManifest, SourceSnapshot};
use tokio::sync::watch;

use crate::config_feed::{self, ConfigState};
use sergeant_host::static_pods::{Scan, ScanError, Scanner};
use sergeant_supervisor::failpoint;
use sergeant_supervisor::ChildEnv;

/// The longest a change in the directory waits to be seen, whatever `fileCheckFrequency` says.
const MAX_INTERVAL: Duration = Duration::from_secs(1);
/// The shortest scan interval, so a zero `fileCheckFrequency` cannot spin.
const MIN_INTERVAL: Duration = Duration::from_millis(100);
const METRIC: &str = "sergeant_static_pod_manifests";

/// The parts of the configuration this source follows.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Settings {
    path: Option<PathBuf>,
    every: Duration,
    /// The node name comes from the override, or else from the machine.
    hostname_override: Option<String>,
}

impl Settings {
    fn of(config: &NodeConfig) -> Self {
        Self {
            path: config.kubelet.static_pod_path.clone(),
            every: config
                .kubelet
                .file_check_frequency
                .as_std()
                .clamp(MIN_INTERVAL, MAX_INTERVAL),
            hostname_override: config.command_line.hostname_override.clone(),
        }
    }
}

/// Standalone mode's source of pods, like upstream's `staticPodPath` file source: turns the
/// manifests in `staticPodPath` into a [`SourceSnapshot`] for the pod manager.
pub struct StaticPodSource {
    env: ChildEnv,
    config: watch::Receiver<ConfigState>,
    out: watch::Sender<SourceSnapshot>,
    settings: Option<Settings>,
    /// Incremented on every change of settings; results of older scans are dropped.
    generation: u64,
    /// `None` while a scan is running, or before the node name is known.
    scanner: Option<Scanner>,
    timer: Option<SpawnHandle>,
    /// inotify on `staticPodPath`, so a manifest is read as soon as it is written; the
    /// periodic scan stays as the safety net (and the only way when the path is missing).
    watcher: Option<notify::RecommendedWatcher>,
    /// The scan waiting for a burst of inotify events to end.
    debounce: Option<SpawnHandle>,
    last_scan_error: Option<ScanError>,
}

impl StaticPodSource {
    /// A source that reads the live configuration from `config` and publishes on `out`.
    #[must_use]
    pub fn new(
        env: &ChildEnv,
        config: watch::Receiver<ConfigState>,
        out: watch::Sender<SourceSnapshot>,
    ) -> Self {
        Self {
            env: env.clone(),
            config,
            out,
            settings: None,
            generation: 0,
            scanner: None,
            timer: None,
            watcher: None,
            debounce: None,
            last_scan_error: None,
        }
    }

    /// Takes the configuration in force; when what this source follows changed, starts over
    /// with the new settings.
    fn reconfigure(&mut self, ctx: &mut Context<Self>) {
        let active = self.config.borrow_and_update().active.clone();
        let settings = Settings::of(&active);
        if self.settings.as_ref() == Some(&settings) {
            return;
        }
        if self.settings.as_ref().map(|s| s.every) != Some(settings.every) {
            if let Some(timer) = self.timer.take() {
                ctx.cancel_future(timer);
            }
            self.timer = Some(ctx.run_interval(settings.every, |act, ctx| act.scan(ctx)));
        }
        let same_source = self.settings.as_ref().is_some_and(|old| {
            old.path == settings.path && old.hostname_override == settings.hostname_override
        });
        if same_source {
            // Only the interval changed: keep the scanner and what it has read.
            self.settings = Some(settings);
            return;
        }
        self.generation += 1;
        self.scanner = None;
        self.watcher = settings.path.as_deref().and_then(|path| watch(path, ctx));
        self.last_scan_error = None;
        let path = settings.path.clone();
        self.settings = Some(settings);
        let Some(path) = path else {
            self.env.set_status("staticPodPath not set: no static pods");
            self.publish(Scan::default());
            return;
        };
        tracing::info!(path = %path.display(), "watching for static pod manifests");
        self.env
            .set_status(format!("reading {} (not synced yet)", path.display()));
        let generation = self.generation;
        let resolve = async move { tokio::task::spawn_blocking(move || active.node_name()).await };
        ctx.spawn(resolve.into_actor(self).map(move |node, act, ctx| {
            if act.generation != generation {
                return;
            }
            let fail = |act: &mut Self, ctx: &mut Context<Self>, reason: &dyn std::fmt::Display| {
                act.env
                    .fail(ctx, format!("static pods need the node name: {reason}"));
            };
            match node {
                Ok(Ok(node)) => {
                    act.scanner = Some(Scanner::new(path, node));
                    act.scan(ctx);
                }
                Ok(Err(error)) => fail(act, ctx, &error),
                Err(unfinished) => {
                    fail(act, ctx, &format!("resolving did not finish: {unfinished}"));
                }
            }
        }));
    }

    /// Starts a scan unless one is running or the source is not ready.
    fn scan(&mut self, ctx: &mut Context<Self>) {
        if let Err(fault) = failpoint::check("sources::scan") {
            self.env.fail(ctx, fault);
            return;
        }
        let Some(mut scanner) = self.scanner.take() else {
            return;
        };
        let generation = self.generation;
        let work = async move {
            tokio::task::spawn_blocking(move || {
                let scan = scanner.scan();
                (scanner, scan)
            })
            .await
        };
        ctx.spawn(work.into_actor(self).map(move |done, act, ctx| {
            if act.generation != generation {
                return;
            }
            match done {
                Ok((scanner, scan)) => {
                    act.scanner = Some(scanner);
                    act.take(scan);
                }
                Err(err) => act.env.fail(ctx, format!("a scan did not finish: {err}")),
            }
        }));
    }

    fn take(&mut self, scan: Result<Scan, ScanError>) {
        let path = self
            .settings
            .as_ref()
            .and_then(|s| s.path.as_ref())
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        match scan {
            Ok(scan) => {
                self.last_scan_error = None;
                let (pods, rejected) = (scan.pods.len(), scan.rejected.len());
                self.env.set_status(if scan.missing {
                    format!("watching {path} (does not exist): 0 pods, 0 rejected")
                } else {
                    format!("watching {path}: {pods} pods, {rejected} rejected")
                });
                self.publish(scan);
            }
            Err(err) => {
                if self.last_scan_error.as_ref() != Some(&err) {
                    tracing::warn!("{err}; keeping the static pods last read");
                }
                self.env
                    .set_status(format!("{err}; keeping the static pods last read"));
                self.last_scan_error = Some(err);
            }
        }
    }

    /// Publishes the scan as the source's snapshot, if it differs from the one out there.
    fn publish(&mut self, scan: Scan) {
        let rejected: Vec<RejectedManifest> = scan
            .rejected
            .into_iter()
            .map(|(origin, error)| RejectedManifest { origin, error })
            .collect();
        let previous: Vec<RejectedManifest> = self.out.borrow().rejected.clone();
        for rejected in rejected.iter().filter(|r| !previous.contains(r)) {
            tracing::warn!(file = %rejected.origin, "static pod manifest rejected: {}", rejected.error);
        }
        metrics::gauge!(METRIC, "state" => "accepted").set(scan.pods.len() as f64);
        metrics::gauge!(METRIC, "state" => "rejected").set(rejected.len() as f64);
        let next = SourceSnapshot {
            synced: true,
            source: PodSource::File,
            pods: scan.pods,
            rejected,
        };
        self.out.send_if_modified(|current| {
            let same = current.synced
                && current.source == next.source
                && same_pods(&current.pods, &next.pods)
                && current.rejected == next.rejected;
            if !same {
                *current = next;
            }
            !same
        });
    }
}

/// Whether two snapshots hold the same pods. A manifest that did not change keeps the very
/// object it was loaded as, so most pairs are the same allocation and need no field-by-field
/// comparison, which cost milliseconds of the shared loop per rescan with 110 pods.
fn same_pods(current: &[Arc<Pod>], next: &[Arc<Pod>]) -> bool {
    current.len() == next.len()
        && current
            .iter()
            .zip(next)
            .all(|(a, b)| Arc::ptr_eq(a, b) || a == b)
}

/// How long inotify events must pause before the scan they trigger.
const DEBOUNCE: Duration = Duration::from_millis(50);

/// Something changed in `staticPodPath`: scan soon.
#[derive(Debug, Clone, Copy)]
struct Changed;

impl Message for Changed {
    type Result = ();
}

impl Handler<Changed> for StaticPodSource {
    type Result = ();

    fn handle(&mut self, _: Changed, ctx: &mut Context<Self>) {
        // A write comes as several events; scan once they have settled, so a half-written
        // file is not read (and its pod not dropped) in between.
        if let Some(pending) = self.debounce.take() {
            ctx.cancel_future(pending);
        }
        self.debounce = Some(ctx.run_later(DEBOUNCE, |act, ctx| {
            act.debounce = None;
            act.scan(ctx);
        }));
    }
}

/// Watches `path` with inotify, telling the actor on every change; `None` (and a debug line)
/// when it cannot, for example because the directory does not exist yet.
fn watch(
    path: &std::path::Path,
    ctx: &mut Context<StaticPodSource>,
) -> Option<notify::RecommendedWatcher> {
    use notify::Watcher;
    let addr = ctx.address();
    let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if event.is_ok() {
            addr.do_send(Changed);
        }
    });
    match watcher.and_then(|mut w| {
        w.watch(path, notify::RecursiveMode::NonRecursive)
            .map(|()| w)
    }) {
        Ok(watcher) => Some(watcher),
        Err(err) => {
            tracing::debug!(path = %path.display(), "no inotify watch, polling only: {err}");
            None
        }
    }
}

impl Actor for StaticPodSource {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        metrics::describe_gauge!(
            METRIC,
            "Static pod manifests in staticPodPath, by state (accepted or rejected)."
        );
        config_feed::follow(ctx, self.config.clone(), Self::reconfigure);
        self.reconfigure(ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> NodeConfig {
        let flags = sergeant_config::FlagOverrides {
            hostname_override: Some("node-a".into()),
            ..Default::default()
        };
        NodeConfig::parse(text, "test", &flags).unwrap()
    }

    #[test]
    fn interval_is_capped_at_one_second_and_floored() {
        let base = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";
        let slow = config(&format!(
            "{base}staticPodPath: /m\nfileCheckFrequency: 20s\n"
        ));
        assert_eq!(Settings::of(&slow).every, MAX_INTERVAL);
        assert_eq!(Settings::of(&slow).path, Some(PathBuf::from("/m")));
        let fast = config(&format!("{base}fileCheckFrequency: 200ms\n"));
        assert_eq!(Settings::of(&fast).every, Duration::from_millis(200));
        assert_eq!(Settings::of(&fast).path, None);
    }
}
