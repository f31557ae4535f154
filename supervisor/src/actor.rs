//! The supervisor actor: starts its children in order, watches each for a stop, an error exit
//! or a panic, restarts by strategy with backoff, gives a child up past the restart intensity
//! and escalates, and stops its children in reverse order with a deadline each. One is declared
//! as the child of another with [`ChildSpec::supervisor`], here beside it.

use std::time::Duration;

use actix::{
    Actor, ActorContext, ActorFutureExt, AsyncContext, Context, Handler, ResponseFuture,
    Running as ActorRunning, WrapFuture,
};
use futures::future::join_all;
use sergeant_messages::supervision::{ChildState, GetTree, Strategy, TreeNode};

use super::child::ChildSpec;
use super::env::ChildEnv;
use super::life::{stopping_after_children, Drains, Life, Shutdown};
use super::metrics;
use super::policy::RestartPolicy;
use super::running::JoinOutcome;
use super::slot::{Mark, Slot};

/// A supervisor of a fixed, ordered list of children.
pub struct Supervisor {
    env: ChildEnv,
    strategy: Strategy,
    policy: RestartPolicy,
    children: Vec<Child>,
    shutdown: Shutdown,
}

impl ChildSpec {
    /// A child supervisor with its own strategy and children, published to `slot`.
    ///
    /// Its shutdown deadline covers its children's, so it is never aborted while it is still
    /// stopping them in order.
    pub fn supervisor(
        name: &str,
        strategy: Strategy,
        policy: &RestartPolicy,
        slot: &Slot<Supervisor>,
        children: Vec<ChildSpec>,
    ) -> Self {
        let own_deadline = policy.shutdown_timeout;
        let children_deadline: Duration = children.iter().map(|c| c.deadline(policy)).sum();
        let policy = policy.clone();
        let make =
            move |env: ChildEnv| Supervisor::new(env, strategy, policy.clone(), children.clone());
        Self {
            strategy: Some(strategy),
            ..Self::supervising(name, slot, make, own_deadline + children_deadline)
        }
    }
}

/// One child: how to start it, and its life so far.
struct Child {
    spec: ChildSpec,
    life: Life,
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
                life: Life::new(env.child(spec.name()), &policy),
                spec,
            })
            .collect();
        Self {
            env,
            strategy,
            policy,
            children,
            shutdown: Shutdown::No,
        }
    }

    fn start_child(&mut self, index: usize, ctx: &mut Context<Self>) {
        let child = &mut self.children[index];
        child.life.env.clear_exit_reason();
        let running = child.spec.start(child.life.env.clone());
        let done = running.done();
        let generation = child.life.started(running);
        metrics::set_up(child.life.env.path(), true);
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
        if !child.life.ended(generation) {
            return;
        }
        metrics::set_up(child.life.env.path(), false);
        if self.shutdown.started() {
            child.life.set_state(ChildState::Stopped);
            (child.spec.mark)(Mark::Down);
            return;
        }
        let message = child.life.failed(&outcome);
        let Some(delay) = child.life.next_restart() else {
            child.life.set_state(ChildState::GaveUp);
            (child.spec.mark)(Mark::Down);
            let reason = child.life.give_up_reason(&message);
            tracing::error!(supervisor = self.env.path(), "{reason}");
            self.env.fail(ctx, reason);
            return;
        };
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
            child.life.set_state(ChildState::Restarting);
            (child.spec.mark)(Mark::Restarting);
            if let Some(running) = child.life.running.take() {
                metrics::set_up(child.life.env.path(), false);
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
            if act.shutdown.started() {
                return;
            }
            for index in group {
                let child = &mut act.children[index];
                if child.life.state() == ChildState::Restarting {
                    child.life.restarts += 1;
                    metrics::count_restart(child.life.env.path());
                    act.start_child(index, ctx);
                }
            }
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
            isolated: false,
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
        stopping_after_children(self, ctx)
    }
}

impl Handler<GetTree> for Supervisor {
    type Result = ResponseFuture<TreeNode>;

    fn handle(&mut self, ask: GetTree, _: &mut Context<Self>) -> Self::Result {
        let mut root = self.node();
        let children: Vec<_> = self
            .children
            .iter()
            .map(|child| {
                let node = child.life.node(child.spec.name(), child.spec.strategy);
                let inspect = child.life.running.as_ref().and_then(|r| r.inspect.clone());
                async move {
                    let mut node = node;
                    if let Some(inspect) = inspect {
                        if let Some(subtree) = inspect(ask).await {
                            node.children = subtree.children;
                            node.status = subtree.status;
                            node.isolated = subtree.isolated;
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

impl Drains for Supervisor {
    fn shutdown(&mut self) -> &mut Shutdown {
        &mut self.shutdown
    }

    /// Stops every live child in reverse start order, each within its deadline.
    fn drain(&mut self, ctx: &mut Context<Self>) {
        let mut stops = Vec::new();
        for child in self.children.iter_mut().rev() {
            let life = &mut child.life;
            if matches!(life.state(), ChildState::Running | ChildState::Restarting) {
                life.set_state(ChildState::Stopped);
            }
            (child.spec.mark)(Mark::Down);
            if let Some(running) = life.running.take() {
                metrics::set_up(life.env.path(), false);
                let path = life.env.path().to_owned();
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
            act.shutdown = Shutdown::Drained;
            ctx.stop();
        }));
    }
}
