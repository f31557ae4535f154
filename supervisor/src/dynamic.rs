//! The dynamic supervisor (OTP's `simple_one_for_one`): children of one kind that come and go
//! while it runs — one per pod, one per probe worker.
//!
//! Entry point: [`ChildSpec::dynamic_supervisor`] (declared here, beside the supervisor it
//! makes), so it sits in the tree and shows at `/debug/supervision`; an owner that runs one
//! itself makes it with [`DynamicSupervisor::new`]. Others ask it for a child with
//! [`StartChild`], handing over the [`Slot`] they reach the child through, and end one on
//! purpose with [`StopChild`]. A child that stops by itself without a failure reason is done and
//! forgotten (OTP's `transient`); one that panics or exits with [`ChildEnv::fail`] is restarted
//! with the same back-off and intensity rules as a static supervisor's children, each
//! incarnation made afresh by [`MakeChild`] from what is wanted now (which may be nothing any
//! more: the child is then forgotten). Its owner hears of every failure through
//! [`DynamicSpec::on_failure`], to drop what the dead incarnation vouched for. Past its
//! intensity a child is not escalated — one bad pod must not take the node down — but given up
//! for a while: its owner hears of it through [`ChildGaveUp`], and the supervisor tries it again
//! after [`GiveUpPolicy::retry_after`]. For the same reason the children's failures never make
//! the tree degraded ([`TreeNode::isolated`]): they are reported on what the children serve.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::rc::Rc;
use std::time::Duration;

use actix::{
    Actor, ActorContext, ActorFutureExt, Addr, AsyncContext, Context, Handler, Message,
    ResponseActFuture, ResponseFuture, Running as ActorRunning, WrapFuture,
};
use futures::future::{join_all, LocalBoxFuture};
use sergeant_messages::supervision::{ChildGaveUp, ChildState, GetTree, TreeNode};

use super::child::ChildSpec;
use super::env::ChildEnv;
use super::life::{stopping_after_children, Drains, Life, Shutdown};
use super::metrics;
use super::policy::{IntensityWindow, RestartPolicy};
use super::running::{ask_tree, spawn_actor, JoinOutcome};
use super::slot::{Availability, Slot};

/// Makes a fresh incarnation of the child called `name` (the key it was started with), from
/// whatever the truth is now: a restarted pod actor reads the pod's current spec, not the spec
/// its dead predecessor had. `None` when the child is not wanted any more: it is forgotten.
pub type MakeChild<A> = Rc<dyn Fn(&str, &ChildEnv) -> Option<Incarnation<A>>>;

/// Asks a live child for the subtree below it (a pod actor's probe workers), for
/// `/debug/supervision`.
pub type InspectChild<A> = Rc<dyn Fn(&Addr<A>) -> LocalBoxFuture<'static, Option<TreeNode>>>;

/// Told about a child given up, so its owner can report it (the pod's status and an event).
pub type OnGiveUp = Rc<dyn Fn(ChildGaveUp)>;

/// Told the name of a child that just failed and the failure, before it is restarted or given
/// up, so its owner drops what the dead incarnation vouched for (a probe's verdict).
pub type OnFailure = Rc<dyn Fn(&str, &str)>;

/// One incarnation of a dynamic child, as [`MakeChild`] makes it.
pub struct Incarnation<A> {
    /// The actor.
    pub actor: A,
    /// The span every poll of the actor runs in: its identity in the logs (a pod's namespace,
    /// name and UID).
    pub span: tracing::Span,
}

impl<A> Incarnation<A> {
    /// `actor` in the span of its place in the tree ([`ChildEnv::span`]).
    #[must_use]
    pub fn new(actor: A, env: &ChildEnv) -> Self {
        Self {
            actor,
            span: env.span(),
        }
    }
}

/// Asks a child for its subtree with [`GetTree`] (a pod actor answers with its probe workers),
/// giving up after the same timeout as a static supervisor's.
#[must_use]
pub fn inspect_with_get_tree<A>() -> InspectChild<A>
where
    A: Actor<Context = Context<A>> + Handler<GetTree>,
{
    Rc::new(|addr: &Addr<A>| Box::pin(ask_tree(addr.clone(), GetTree::default())))
}

/// What a dynamic supervisor does with a child that fails more often than its intensity allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GiveUpPolicy {
    /// How long a given-up child waits before the supervisor tries it once more, with a fresh
    /// intensity window.
    pub retry_after: Duration,
}

impl Default for GiveUpPolicy {
    fn default() -> Self {
        Self {
            retry_after: Duration::from_secs(60),
        }
    }
}

/// Everything a dynamic supervisor is made of, kept across its own restarts.
pub struct DynamicSpec<A: Actor> {
    /// Back-off, intensity and shutdown deadline of each child.
    pub policy: RestartPolicy,
    /// What happens past the intensity.
    pub give_up: GiveUpPolicy,
    /// How children are made.
    pub make: MakeChild<A>,
    /// Who hears of a child given up.
    pub on_give_up: Option<OnGiveUp>,
    /// Who hears of every failure of a child.
    pub on_failure: Option<OnFailure>,
    /// How a child's own subtree is read, when it has one.
    pub inspect: Option<InspectChild<A>>,
}

impl<A: Actor> Clone for DynamicSpec<A> {
    fn clone(&self) -> Self {
        Self {
            policy: self.policy.clone(),
            give_up: self.give_up,
            make: Rc::clone(&self.make),
            on_give_up: self.on_give_up.clone(),
            on_failure: self.on_failure.clone(),
            inspect: self.inspect.clone(),
        }
    }
}

/// Starts the child called `name`, reached through `slot`; nothing happens when a child of that
/// name is already running or waiting to restart (the owner may ask again whenever it is unsure).
pub struct StartChild<A: Actor> {
    /// The child's key, unique under this supervisor (a pod's UID, a probe's container/kind).
    pub name: String,
    /// Where the supervisor publishes each incarnation.
    pub slot: Slot<A>,
}

impl<A: Actor> Message for StartChild<A> {
    type Result = ();
}

/// Stops the child called `name` on purpose, within the policy's shutdown deadline; it is not
/// restarted. Answers once it has stopped.
pub struct StopChild<A> {
    /// The child's key.
    pub name: String,
    kind: PhantomData<fn() -> A>,
}

impl<A> StopChild<A> {
    /// A request to stop the child called `name`.
    #[must_use]
    pub fn named(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            kind: PhantomData,
        }
    }
}

impl<A: 'static> Message for StopChild<A> {
    type Result = ();
}

impl ChildSpec {
    /// A dynamic supervisor (children that come and go, see [`DynamicSupervisor`]) published to
    /// `slot`; its children show below it in the tree.
    ///
    /// Its shutdown deadline is twice its children's, since it stops them all at once.
    pub fn dynamic_supervisor<A>(
        name: &str,
        slot: &Slot<DynamicSupervisor<A>>,
        spec: DynamicSpec<A>,
    ) -> Self
    where
        A: Actor<Context = Context<A>>,
    {
        let deadline = spec.policy.shutdown_timeout * 2;
        let make = move |env: ChildEnv| DynamicSupervisor::new(&env, spec.clone());
        Self::supervising(name, slot, make, deadline)
    }
}

/// One dynamic child: where its incarnations are published, and its life so far.
struct DynamicChild<A: Actor> {
    slot: Slot<A>,
    life: Life,
}

/// A supervisor of children of one actor type that are started and stopped while it runs.
pub struct DynamicSupervisor<A: Actor<Context = Context<A>>> {
    env: ChildEnv,
    spec: DynamicSpec<A>,
    children: BTreeMap<String, DynamicChild<A>>,
    /// How many child records were made, for each its own range of incarnation numbers.
    lives: u64,
    shutdown: Shutdown,
}

impl<A: Actor<Context = Context<A>>> DynamicSupervisor<A> {
    /// A supervisor at `env`'s place in the tree, with no children until asked.
    #[must_use]
    pub fn new(env: &ChildEnv, spec: DynamicSpec<A>) -> Self {
        Self {
            env: env.clone(),
            spec,
            children: BTreeMap::new(),
            lives: 0,
            shutdown: Shutdown::No,
        }
    }

    fn start_incarnation(&mut self, name: &str, ctx: &mut Context<Self>) {
        let Some(child) = self.children.get_mut(name) else {
            return;
        };
        child.life.env.clear_exit_reason();
        let Some(made) = (self.spec.make)(name, &child.life.env) else {
            tracing::info!(
                child = child.life.env.path(),
                "not wanted any more, forgotten"
            );
            child.slot.publish(Availability::Down);
            self.children.remove(name);
            return;
        };
        let (addr, running) = spawn_actor(made.actor, made.span);
        child.slot.publish(Availability::Up(addr));
        let done = running.done();
        let generation = child.life.started(running);
        let name = name.to_owned();
        ctx.spawn(
            done.into_actor(self)
                .map(move |outcome, act, ctx| act.child_ended(&name, generation, &outcome, ctx)),
        );
    }

    fn child_ended(
        &mut self,
        name: &str,
        generation: u64,
        outcome: &JoinOutcome,
        ctx: &mut Context<Self>,
    ) {
        let Some(child) = self.children.get_mut(name) else {
            return;
        };
        if !child.life.ended(generation) {
            return;
        }
        if self.shutdown.started()
            || (*outcome == JoinOutcome::Stopped && child.life.env.exit_reason().is_none())
        {
            // Done: a transient child that finished its job is forgotten.
            child.slot.publish(Availability::Down);
            self.children.remove(name);
            return;
        }
        let message = child.life.failed(outcome);
        if let Some(on_failure) = &self.spec.on_failure {
            on_failure(name, &message);
        }
        child.slot.publish(Availability::Restarting);
        child.life.set_state(ChildState::Restarting);
        let delay = child.life.next_restart().unwrap_or_else(|| {
            child.life.set_state(ChildState::GaveUp);
            let reason = child.life.give_up_reason(&message);
            child.life.window = IntensityWindow::new(&self.spec.policy);
            let retry_after = self.spec.give_up.retry_after;
            tracing::error!(supervisor = self.env.path(), ?retry_after, "{reason}");
            if let Some(on_give_up) = &self.spec.on_give_up {
                on_give_up(ChildGaveUp {
                    name: name.to_owned(),
                    reason,
                    retry_after,
                });
            }
            retry_after
        });
        let name = name.to_owned();
        ctx.run_later(delay, move |act, ctx| {
            let due = act.children.get(&name).is_some_and(|child| {
                child.life.generation == generation
                    && child.life.running.is_none()
                    && matches!(
                        child.life.state(),
                        ChildState::Restarting | ChildState::GaveUp
                    )
            });
            if due && !act.shutdown.started() {
                if let Some(child) = act.children.get_mut(&name) {
                    child.life.restarts += 1;
                    metrics::count_restart(child.life.env.path());
                }
                act.start_incarnation(&name, ctx);
            }
        });
    }
}

impl<A: Actor<Context = Context<A>>> Actor for DynamicSupervisor<A> {
    type Context = Context<Self>;

    fn stopping(&mut self, ctx: &mut Context<Self>) -> ActorRunning {
        stopping_after_children(self, ctx)
    }
}

impl<A: Actor<Context = Context<A>>> Handler<StartChild<A>> for DynamicSupervisor<A> {
    type Result = ();

    fn handle(&mut self, start: StartChild<A>, ctx: &mut Context<Self>) {
        if self.shutdown.started() {
            start.slot.publish(Availability::Down);
            return;
        }
        if let Some(child) = self.children.get_mut(&start.name) {
            // Already here: from now on the asker's slot gets the incarnations.
            start.slot.publish(child.slot.availability());
            child.slot = start.slot;
            return;
        }
        // A range of 2^32 incarnations per life: more restarts than a child ever lives through.
        let life = Life::new(self.env.isolated_child(&start.name), &self.spec.policy)
            .counting_from(self.lives << 32);
        self.lives += 1;
        self.children.insert(
            start.name.clone(),
            DynamicChild {
                slot: start.slot,
                life,
            },
        );
        self.start_incarnation(&start.name, ctx);
    }
}

impl<A: Actor<Context = Context<A>>> Handler<StopChild<A>> for DynamicSupervisor<A> {
    type Result = ResponseActFuture<Self, ()>;

    fn handle(&mut self, stop: StopChild<A>, _: &mut Context<Self>) -> Self::Result {
        let running = self.children.remove(&stop.name).and_then(|mut child| {
            child.slot.publish(Availability::Down);
            child.life.running.take()
        });
        let deadline = self.spec.policy.shutdown_timeout;
        Box::pin(
            async move {
                if let Some(running) = running {
                    running.stop(deadline).await;
                }
            }
            .into_actor(self),
        )
    }
}

impl<A: Actor<Context = Context<A>>> Handler<GetTree> for DynamicSupervisor<A> {
    type Result = ResponseFuture<TreeNode>;

    fn handle(&mut self, ask: GetTree, _: &mut Context<Self>) -> Self::Result {
        let children: Vec<_> = self
            .children
            .iter()
            .map(|(name, child)| {
                let node = child.life.node(name, None);
                let below = match (&self.spec.inspect, child.slot.availability()) {
                    (Some(inspect), Availability::Up(addr))
                        if child.life.running.is_some() && !ask.skip_isolated =>
                    {
                        Some(inspect(&addr))
                    }
                    _ => None,
                };
                async move {
                    let mut node = node;
                    if let Some(subtree) = match below {
                        Some(below) => below.await,
                        None => None,
                    } {
                        node.children = subtree.children;
                        node.isolated = subtree.isolated;
                    }
                    node
                }
            })
            .collect();
        let mut root =
            TreeNode::dynamic(self.env.path(), format!("{} children", self.children.len()));
        Box::pin(async move {
            root.children = join_all(children).await;
            root
        })
    }
}

impl<A: Actor<Context = Context<A>>> Drains for DynamicSupervisor<A> {
    fn shutdown(&mut self) -> &mut Shutdown {
        &mut self.shutdown
    }

    /// Stops every live child within its deadline, all at once.
    fn drain(&mut self, ctx: &mut Context<Self>) {
        let deadline = self.spec.policy.shutdown_timeout;
        let stops: Vec<_> = self
            .children
            .values_mut()
            .filter_map(|child| {
                child.life.set_state(ChildState::Stopped);
                child.slot.publish(Availability::Down);
                child
                    .life
                    .running
                    .take()
                    .map(|running| running.stop(deadline))
            })
            .collect();
        ctx.spawn(join_all(stops).into_actor(self).map(|_, act, ctx| {
            act.shutdown = Shutdown::Drained;
            ctx.stop();
        }));
    }
}
