//! The `ContainerLogManager` actor: every `containerLogMonitorInterval` it runs one pass over
//! this node's running containers (see [`super::pass`]), one pass at a time, and follows live
//! changes of the rotation settings.

use std::time::Duration;

use actix::{Actor, ActorFutureExt, AsyncContext, Context, SpawnHandle, WrapFuture};
use sergeant_config::kubelet::KubeletConfiguration;
use tokio::sync::watch;

use super::pass::{self, FAILURES, ROTATIONS};
use crate::config_feed::{self, ConfigState};
use crate::runtime::RuntimePort;
use sergeant_host::log_rotation::Policy;
use sergeant_supervisor::failpoint;
use sergeant_supervisor::ChildEnv;

/// The parts of the configuration rotation follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Settings {
    policy: Policy,
    every: Duration,
    workers: usize,
}

impl Settings {
    /// Validation keeps these in range (size above 0, at least 2 files and 1 worker, 3 s or
    /// more); out-of-range values that still got here rotate nothing rather than everything.
    fn of(config: &KubeletConfiguration) -> Self {
        Self {
            policy: Policy {
                max_size: u64::try_from(config.container_log_max_size.value())
                    .ok()
                    .filter(|size| *size > 0)
                    .unwrap_or(u64::MAX),
                max_files: usize::try_from(config.container_log_max_files)
                    .unwrap_or(2)
                    .max(2),
            },
            every: config.container_log_monitor_interval.as_std(),
            workers: usize::try_from(config.container_log_max_workers)
                .unwrap_or(1)
                .max(1),
        }
    }
}

/// Rotates container logs as upstream's container log manager does, so a chatty container
/// cannot fill the node's disk: at most `containerLogMaxFiles` files of at most about
/// `containerLogMaxSize` each per container.
pub struct ContainerLogManager {
    env: ChildEnv,
    port: RuntimePort,
    node: String,
    config: watch::Receiver<ConfigState>,
    settings: Option<Settings>,
    timer: Option<SpawnHandle>,
    /// Whether a pass is running; a tick during one is skipped.
    busy: bool,
}

impl ContainerLogManager {
    /// A manager rotating the logs of node `node`'s containers, found through `port`, with the
    /// live settings of `config`.
    #[must_use]
    pub fn new(
        env: &ChildEnv,
        port: RuntimePort,
        config: watch::Receiver<ConfigState>,
        node: String,
    ) -> Self {
        Self {
            env: env.clone(),
            port,
            node,
            config,
            settings: None,
            timer: None,
            busy: false,
        }
    }

    /// Takes the settings in force, restarting the timer when the interval changed.
    fn reconfigure(&mut self, ctx: &mut Context<Self>) {
        let settings = Settings::of(&self.config.borrow_and_update().active.kubelet);
        let previous = self.settings.replace(settings);
        if previous == Some(settings) {
            return;
        }
        tracing::info!(
            max_size = settings.policy.max_size,
            max_files = settings.policy.max_files,
            every = ?settings.every,
            workers = settings.workers,
            "container log rotation settings"
        );
        if previous.map(|p| p.every) != Some(settings.every) {
            if let Some(timer) = self.timer.take() {
                ctx.cancel_future(timer);
            }
            self.timer = Some(ctx.run_interval(settings.every, |act, ctx| act.tick(ctx)));
        }
        self.env.set_status(format!(
            "checking container logs every {:?}",
            settings.every
        ));
    }

    /// Starts a pass unless one is still running.
    fn tick(&mut self, ctx: &mut Context<Self>) {
        if let Err(fault) = failpoint::check("container-log-manager::tick") {
            return self.env.fail(ctx, fault);
        }
        let Some(settings) = self.settings else {
            return;
        };
        if self.busy {
            return;
        }
        self.busy = true;
        let run = pass::run(
            self.port.clone(),
            self.node.clone(),
            settings.policy,
            settings.workers,
        );
        ctx.spawn(run.into_actor(self).map(move |done, act, _| {
            act.busy = false;
            let every = settings.every;
            act.env.set_status(match done {
                Ok(summary) => format!(
                    "checking container logs every {every:?}; last pass: {} running, {} rotated, {} failed",
                    summary.checked, summary.rotated, summary.failed
                ),
                Err(err) => {
                    tracing::debug!("listing containers for log rotation failed: {err}");
                    format!("checking container logs every {every:?}; last pass could not list containers: {err}")
                }
            });
        }));
    }
}

impl Actor for ContainerLogManager {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        metrics::describe_counter!(
            ROTATIONS,
            "Container logs rotated (renamed and reopened by the runtime)."
        );
        metrics::describe_counter!(
            FAILURES,
            "Containers whose log could not be checked or rotated, by the stage that failed."
        );
        config_feed::follow(ctx, self.config.clone(), Self::reconfigure);
        self.reconfigure(ctx);
        self.tick(ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(extra: &str) -> Settings {
        let text = format!(
            "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n{extra}"
        );
        let config = sergeant_config::NodeConfig::parse(
            &text,
            "test",
            &sergeant_config::FlagOverrides::default(),
        )
        .unwrap();
        Settings::of(&config.kubelet)
    }

    #[test]
    fn settings_follow_the_upstream_fields_and_defaults() {
        let defaults = settings("");
        assert_eq!(
            defaults,
            Settings {
                policy: Policy {
                    max_size: 10 * 1024 * 1024,
                    max_files: 5
                },
                every: Duration::from_secs(10),
                workers: 1,
            }
        );
        let set = settings(
            "containerLogMaxSize: 4Ki\ncontainerLogMaxFiles: 3\ncontainerLogMonitorInterval: 3s\ncontainerLogMaxWorkers: 4\n",
        );
        assert_eq!(set.policy.max_size, 4096);
        assert_eq!(set.policy.max_files, 3);
        assert_eq!(set.every, Duration::from_secs(3));
        assert_eq!(set.workers, 4);
    }
}
