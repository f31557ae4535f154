//! The supervisor actor: starts its children in order, watches each for a stop, an error exit
//! or a panic, restarts by strategy with backoff, gives a child up past the restart intensity
//! and escalates, and stops its children in reverse order with a deadline each.

use std::time::{Duration, Instant, SystemTime};

use actix::{
    Actor, ActorContext, ActorFutureExt, AsyncContext, Context, Handler, ResponseFuture,
    Running as ActorRunning, WrapFuture,
};
use futures::future::join_all;
use sergeant_messages::supervision::{ChildState, FailureRecord, GetTree, Strategy, TreeNode};

use super::child::{ChildEnv, ChildSpec, JoinOutcome, Running};
use super::metrics;
use super::policy::{Backoff, IntensityWindow, RestartPolicy};
use super::slot::Mark;

/// A supervisor of a fixed, ordered list of children.
pub struct Supervisor {
    env: ChildEnv,
    strategy: Strategy,
    policy: RestartPolicy,
    children: Vec<Child>,
    shutting_down: bool,
    drained: bool,
}

/// The supervisor's record of one child across its incarnations.
struct Child {
    spec: ChildSpec,
    env: ChildEnv,
    state: ChildState,
    generation: u64,
    running: Option<Running>,
    restarts: u64,
    window: IntensityWindow,
    backoff: Backoff,
    started_at: Instant,
    last_failure: Option<FailureRecord>,
}

impl Supervisor {
    /// A supervisor at `env`'s place in the tree; it starts `children` in order when started.
    #[must_use]
    pub fn new(
        env: ChildEnv,
        strategy: Strategy,
        policy: RestartPolicy,
        children: Vec<ChildSpec>,
    ) -> Self {
        let children = children
            .into_iter()
            .map(|spec| Child {
                env: env.child(spec.name()),
                spec,
                state: ChildState::Restarting,
                generation: 0,
                running: None,
                restarts: 0,
                window: IntensityWindow::new(&policy),
                backoff: Backoff::new(&policy),
                started_at: Instant::now(),
                last_failure: None,
            })
            .collect();
        Self {
            env,
            strategy,
            policy,
            children,
            shutting_down: false,
            drained: false,
        }
    }

    fn start_child(&mut self, index: usize, ctx: &mut Context<Self>) {
        let child = &mut self.children[index];
        child.generation += 1;
        child.env.clear_exit_reason();
        let running = child.spec.start(child.env.clone());
        let done = running.done();
        child.running = Some(running);
        child.state = ChildState::Running;
        child.started_at = Instant::now();
        metrics::set_up(child.env.path(), true);
        let generation = child.generation;
        ctx.spawn(
            done.into_actor(self)
                .map(move |outcome, act, ctx| act.child_ended(index, generation, outcome, ctx)),
        );
    }

    fn child_ended(
        &mut self,
        index: usize,
        generation: u64,
        outcome: JoinOutcome,
        ctx: &mut Context<Self>,
    ) {
        let child = &mut self.children[index];
        if child.generation != generation || child.running.is_none() {
            return; // stopped on purpose; whoever stopped it is in charge
        }
        child.running = None;
        metrics::set_up(child.env.path(), false);
        if self.shutting_down {
            child.state = ChildState::Stopped;
            (child.spec.mark)(Mark::Down);
            return;
        }
        let message = describe_failure(&outcome, child.env.exit_reason());
        tracing::error!(child = child.env.path(), "child failed: {message}");
        child.last_failure = Some(FailureRecord {
            at: rfc3339(SystemTime::now()),
            message: message.clone(),
        });
        if !child.window.admit(Instant::now()) {
            child.state = ChildState::GaveUp;
            (child.spec.mark)(Mark::Down);
            let reason = format!(
                "gave up on {} after more than {}: {message}",
                child.env.path(),
                child.window.describe()
            );
            tracing::error!(supervisor = self.env.path(), "{reason}");
            self.env.fail(ctx, reason);
            return;
        }
        let delay = child.backoff.delay(child.started_at.elapsed());
        let group: Vec<usize> = match self.strategy {
            Strategy::OneForOne => vec![index],
            Strategy::RestForOne => (index..self.children.len()).collect(),
            Strategy::OneForAll => (0..self.children.len()).collect(),
        };
        self.restart_group(group, delay, ctx);
    }

    /// Stops the live members of `group` in reverse order, waits `delay`, then starts every
    /// member again in order.
    fn restart_group(&mut self, group: Vec<usize>, delay: Duration, ctx: &mut Context<Self>) {
        let mut stops = Vec::new();
        for &index in group.iter().rev() {
            let child = &mut self.children[index];
            child.state = ChildState::Restarting;
            (child.spec.mark)(Mark::Restarting);
            if let Some(running) = child.running.take() {
                metrics::set_up(child.env.path(), false);
                stops.push(running.stop(child.spec.deadline(&self.policy)));
            }
        }
        tracing::info!(
            supervisor = self.env.path(),
            ?delay,
            "restarting {} child(ren)",
            group.len()
        );
        let wait = async move {
            for stop in stops {
                stop.await;
            }
            tokio::time::sleep(delay).await;
        };
        ctx.spawn(wait.into_actor(self).map(move |(), act, ctx| {
            if act.shutting_down {
                return;
            }
            for index in group {
                let child = &mut act.children[index];
                if child.state == ChildState::Restarting {
                    child.restarts += 1;
                    metrics::count_restart(child.env.path());
                    act.start_child(index, ctx);
                }
            }
        }));
    }

    /// Stops every live child in reverse start order, each within its deadline, then stops
    /// this supervisor for good.
    fn drain(&mut self, ctx: &mut Context<Self>) {
        let mut stops = Vec::new();
        for child in self.children.iter_mut().rev() {
            if child.state == ChildState::Running || child.state == ChildState::Restarting {
                child.state = ChildState::Stopped;
            }
            (child.spec.mark)(Mark::Down);
            if let Some(running) = child.running.take() {
                metrics::set_up(child.env.path(), false);
                let path = child.env.path().to_owned();
                let deadline = child.spec.deadline(&self.policy);
                stops.push(async move {
                    if running.stop(deadline).await == JoinOutcome::Aborted {
                        tracing::warn!(
                            child = path,
                            ?deadline,
                            "child missed its shutdown deadline and was aborted"
                        );
                    }
                });
            }
        }
        let drain = async move {
            for stop in stops {
                stop.await;
            }
        };
        ctx.spawn(drain.into_actor(self).map(|(), act, ctx| {
            act.drained = true;
            ctx.stop();
        }));
    }

    fn node(&self) -> TreeNode {
        TreeNode {
            name: self.env.name().to_owned(),
            path: self.env.path().to_owned(),
            strategy: Some(self.strategy),
            state: ChildState::Running,
            restarts: 0,
            last_failure: None,
            status: self.env.status(),
            children: Vec::new(),
        }
    }
}

impl Actor for Supervisor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        tracing::info!(supervisor = self.env.path(), strategy = ?self.strategy, "starting {} children", self.children.len());
        for index in 0..self.children.len() {
            self.start_child(index, ctx);
        }
    }

    fn stopping(&mut self, ctx: &mut Context<Self>) -> ActorRunning {
        if self.drained {
            return ActorRunning::Stop;
        }
        if !self.shutting_down {
            self.shutting_down = true;
            self.drain(ctx);
        }
        ActorRunning::Continue
    }
}

impl Handler<GetTree> for Supervisor {
    type Result = ResponseFuture<TreeNode>;

    fn handle(&mut self, _: GetTree, _: &mut Context<Self>) -> Self::Result {
        let mut root = self.node();
        let children: Vec<_> = self
            .children
            .iter()
            .map(|child| {
                let node = TreeNode {
                    name: child.spec.name().to_owned(),
                    path: child.env.path().to_owned(),
                    strategy: child.spec.strategy,
                    state: child.state,
                    restarts: child.restarts,
                    last_failure: child.last_failure.clone(),
                    status: child.env.status(),
                    children: Vec::new(),
                };
                let inspect = child.running.as_ref().and_then(|r| r.inspect.clone());
                async move {
                    let mut node = node;
                    if let Some(inspect) = inspect {
                        if let Some(subtree) = inspect().await {
                            node.children = subtree.children;
                            node.status = subtree.status;
                        }
                    }
                    node
                }
            })
            .collect();
        Box::pin(async move {
            root.children = join_all(children).await;
            root
        })
    }
}

fn describe_failure(outcome: &JoinOutcome, reason: Option<String>) -> String {
    match (outcome, reason) {
        (JoinOutcome::Panicked(message), _) => format!("panicked: {message}"),
        (_, Some(reason)) => format!("failed: {reason}"),
        (JoinOutcome::Stopped, None) => "stopped unexpectedly".to_owned(),
        (JoinOutcome::Aborted, None) => "aborted".to_owned(),
    }
}

/// Formats a wall-clock time as RFC 3339 in UTC with millisecond precision.
pub(crate) fn rfc3339(time: SystemTime) -> String {
    let since_epoch = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or(Duration::ZERO);
    let secs = since_epoch.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60,
        since_epoch.subsec_millis()
    )
}

/// Converts days since 1970-01-01 to a proleptic Gregorian (year, month, day).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_formats_known_instants() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
        assert_eq!(rfc3339(t), "2023-11-14T22:13:20.123Z");
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00.000Z");
    }
}
