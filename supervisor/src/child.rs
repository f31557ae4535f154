//! What a supervisor knows about one child: how to start it ([`ChildSpec`]), what the child
//! gets to talk back with ([`ChildEnv`]), and the handle of a started incarnation ([`Running`]).

use std::fmt::Display;
use std::rc::Rc;
use std::time::Duration;

use actix::{Actor, ActorContext, ActorFutureExt, AsyncContext, Context, WrapFuture};
use futures::future::{FutureExt, LocalBoxFuture, Shared};
use sergeant_messages::supervision::{ChildState, GetTree, Strategy, TreeNode};
use tokio::sync::{oneshot, watch};
use tokio::task::AbortHandle;
use tracing::Instrument;

use super::actor::Supervisor;
use super::dynamic::{DynamicSpec, DynamicSupervisor};
use super::health::TreeHealth;
use super::policy::RestartPolicy;
use super::slot::{Availability, Mark, Slot};

/// How long a supervisor waits for a child supervisor's subtree when building the tree JSON.
const INSPECT_TIMEOUT: Duration = Duration::from_millis(500);

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

/// How an actor's task ended, as seen from its join handle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JoinOutcome {
    /// The actor stopped (by itself, by request, or after reporting a failure).
    Stopped,
    /// A handler panicked; the message is the panic payload.
    Panicked(String),
    /// The task was aborted, after missing its shutdown deadline.
    Aborted,
}

/// A started incarnation of a child.
pub struct Running {
    stop: Option<oneshot::Sender<()>>,
    pub(crate) done: Shared<LocalBoxFuture<'static, JoinOutcome>>,
    abort: Abort,
    pub(crate) inspect: Option<InspectFn>,
}

/// How to end an incarnation that missed its shutdown deadline.
pub(super) enum Abort {
    /// Abort its task on this loop.
    Task(AbortHandle),
    /// Stop the thread it runs on alone.
    Thread(actix_rt::ArbiterHandle),
}

impl Running {
    /// The handle of an incarnation that stops when `stop` fires, ends with `done`, and is
    /// ended by force with `abort`.
    pub(super) fn new(
        stop: oneshot::Sender<()>,
        done: Shared<LocalBoxFuture<'static, JoinOutcome>>,
        abort: Abort,
    ) -> Self {
        Self {
            stop: Some(stop),
            done,
            abort,
            inspect: None,
        }
    }

    /// Asks the incarnation to stop and waits for it up to `deadline`, aborting it past that.
    /// For an owner that runs an incarnation outside a supervisor (the runtime-adapter actor
    /// with the adapter it swaps).
    pub async fn stop(mut self, deadline: Duration) -> JoinOutcome {
        if let Some(stop) = self.stop.take() {
            // The actor may already be gone; then `done` resolves at once.
            let _ = stop.send(());
        }
        if let Ok(outcome) = tokio::time::timeout(deadline, self.done.clone()).await {
            return outcome;
        }
        match &self.abort {
            Abort::Task(task) => task.abort(),
            Abort::Thread(thread) => {
                thread.stop();
            }
        }
        self.done.await
    }

    /// A future that resolves when the incarnation ends, saying how.
    pub fn done(&self) -> Shared<LocalBoxFuture<'static, JoinOutcome>> {
        self.done.clone()
    }
}

/// Starts `actor` on the current arbiter so that its end — stop or panic — is observable.
///
/// This is what actix's own supervisor cannot do: the actor's context runs as a task of its
/// own, and the task's join handle tells a panic from a stop. The returned [`Running`] also
/// stops the actor on request, without the actor having to handle a stop message.
pub fn spawn_actor<A>(actor: A, span: tracing::Span) -> (actix::Addr<A>, Running)
where
    A: Actor<Context = Context<A>>,
{
    let mut ctx = Context::<A>::new();
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    ctx.spawn(
        stop_rx
            .into_actor(&actor)
            .map(|_, _, ctx: &mut Context<A>| ctx.stop()),
    );
    let addr = ctx.address();
    let handle = actix_rt::spawn(ctx.into_future(actor).instrument(span));
    let abort = handle.abort_handle();
    let done = async move {
        match handle.await {
            Ok(()) => JoinOutcome::Stopped,
            Err(err) if err.is_panic() => JoinOutcome::Panicked(panic_message(err.into_panic())),
            Err(_) => JoinOutcome::Aborted,
        }
    }
    .boxed_local()
    .shared();
    (addr, Running::new(stop_tx, done, Abort::Task(abort)))
}

pub(super) fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "panic with a non-text payload".to_owned()
    }
}

type StartFn = Rc<dyn Fn(ChildEnv) -> Running>;
type InspectFn = Rc<dyn Fn(GetTree) -> LocalBoxFuture<'static, Option<TreeNode>>>;

/// The subtree of the supervisor (or pod actor) at `addr` as `ask` asks for it, or `None` when
/// it did not answer within [`INSPECT_TIMEOUT`].
pub(super) async fn ask_tree<S>(addr: actix::Addr<S>, ask: GetTree) -> Option<TreeNode>
where
    S: Actor<Context = Context<S>> + actix::Handler<GetTree>,
{
    match tokio::time::timeout(INSPECT_TIMEOUT, addr.send(ask)).await {
        Ok(Ok(tree)) => Some(tree),
        _ => None,
    }
}

/// Reads the subtree of the supervisor at `addr`, giving up after [`INSPECT_TIMEOUT`].
fn inspector<S>(addr: actix::Addr<S>) -> InspectFn
where
    S: Actor<Context = Context<S>> + actix::Handler<GetTree>,
{
    Rc::new(move |ask| ask_tree(addr.clone(), ask).boxed_local())
}
type MarkFn = Rc<dyn Fn(Mark)>;

/// How to start one child, again and again: its name, a factory for fresh incarnations, and
/// the slot through which others reach whichever incarnation is current.
#[derive(Clone)]
pub struct ChildSpec {
    pub(crate) name: String,
    pub(crate) start: StartFn,
    pub(crate) mark: MarkFn,
    pub(crate) shutdown_timeout: Option<Duration>,
    pub(crate) strategy: Option<Strategy>,
}

impl std::fmt::Debug for ChildSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildSpec")
            .field("name", &self.name)
            .finish()
    }
}

impl ChildSpec {
    /// A worker actor made fresh by `make` at every (re)start and published to `slot`.
    pub fn worker<A, F>(name: &str, slot: &Slot<A>, make: F) -> Self
    where
        A: Actor<Context = Context<A>>,
        F: Fn(&ChildEnv) -> A + 'static,
    {
        let publish = slot.clone();
        let start: StartFn = Rc::new(move |env: ChildEnv| {
            let actor = make(&env);
            let (addr, running) = spawn_actor(actor, env.span());
            publish.publish(Availability::Up(addr));
            running
        });
        Self::starting(name, slot.marker(), start, None)
    }

    /// A child called `name` started by `start`, its availability marked through `mark`.
    fn starting(
        name: &str,
        mark: MarkFn,
        start: StartFn,
        shutdown_timeout: Option<Duration>,
    ) -> Self {
        Self {
            name: name.to_owned(),
            start,
            mark,
            shutdown_timeout,
            strategy: None,
        }
    }

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
        Self::supervising(name, slot, make, own_deadline + children_deadline)
            .with_strategy(strategy)
    }

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

    /// A supervisor made by `make` and published to `slot`, whose subtree shows in the tree.
    fn supervising<S, F>(name: &str, slot: &Slot<S>, make: F, deadline: Duration) -> Self
    where
        S: Actor<Context = Context<S>> + actix::Handler<GetTree>,
        F: Fn(ChildEnv) -> S + 'static,
    {
        let publish = slot.clone();
        let start: StartFn = Rc::new(move |env: ChildEnv| {
            let span = env.span();
            let (addr, mut running) = spawn_actor(make(env), span);
            running.inspect = Some(inspector(addr.clone()));
            publish.publish(Availability::Up(addr));
            running
        });
        Self::starting(name, slot.marker(), start, Some(deadline))
    }

    fn with_strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = Some(strategy);
        self
    }

    /// Overrides the supervisor's shutdown deadline for this child.
    #[must_use]
    pub fn with_shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = Some(timeout);
        self
    }

    /// The child's name under its supervisor.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Starts a fresh incarnation with `env`.
    pub(crate) fn start(&self, env: ChildEnv) -> Running {
        (self.start)(env)
    }

    pub(crate) fn deadline(&self, policy: &RestartPolicy) -> Duration {
        self.shutdown_timeout.unwrap_or(policy.shutdown_timeout)
    }
}
