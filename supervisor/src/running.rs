//! A started incarnation of a child ([`Running`]): spawned so that its end — stop, panic or
//! abort — is observable ([`spawn_actor`], [`JoinOutcome`]), stopped within a deadline, and,
//! for a supervisor, asked for its subtree.

use std::rc::Rc;
use std::time::Duration;

use actix::{Actor, ActorContext, ActorFutureExt, AsyncContext, Context, WrapFuture};
use futures::future::{FutureExt, LocalBoxFuture, Shared};
use sergeant_messages::supervision::{GetTree, TreeNode};
use tokio::sync::oneshot;
use tokio::task::AbortHandle;
use tracing::Instrument;

/// How long a supervisor waits for a child supervisor's subtree when building the tree JSON.
const INSPECT_TIMEOUT: Duration = Duration::from_millis(500);

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

pub(super) type InspectFn = Rc<dyn Fn(GetTree) -> LocalBoxFuture<'static, Option<TreeNode>>>;

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
pub(super) fn inspector<S>(addr: actix::Addr<S>) -> InspectFn
where
    S: Actor<Context = Context<S>> + actix::Handler<GetTree>,
{
    Rc::new(move |ask| ask_tree(addr.clone(), ask).boxed_local())
}
