//! [`spawn_actor_on_thread`]: an actor on a thread of its own, supervised like any other.
//!
//! Most actors share the main event loop, which is cheap while their work is small. A runtime
//! adapter's work is protocol work for everyone at once (HTTP/2 framing and protobuf decoding
//! of every CRI answer, including the relists of all pods), and on that loop it delays every
//! pod actor waiting for its turn. On its own thread it runs beside them instead.

use actix::dev::channel;
use actix::{
    Actor, ActorContext, ActorFutureExt, Addr, Arbiter, AsyncContext, Context, WrapFuture,
};
use futures::future::FutureExt;
use tokio::sync::oneshot;
use tracing::Instrument;

use super::running::{panic_message, Abort, JoinOutcome, Running};

/// The mailbox size of an actor started here (actix's own default).
const MAILBOX_CAPACITY: usize = 16;

/// Why [`spawn_actor_on_thread`] did not start the actor: the caller's `make` failed (its own
/// error, `E`, kept as it is so the caller can tell its causes apart), or the thread ended
/// before the actor was made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpawnError<E> {
    /// `make` failed.
    #[error(transparent)]
    Make(E),
    /// The new thread stopped before it could run `make`.
    #[error("the actor's thread stopped before it could start the actor")]
    NotStarted,
    /// The new thread ended (a panic in `make`) before it answered.
    #[error("the actor's thread ended while making the actor")]
    Ended,
}

/// Builds an actor with `make` on a new thread (an actix arbiter) and starts it there, so its
/// handlers and the futures they spawn never run on the caller's loop.
///
/// `make` runs on the new thread, so whatever the actor spawns while being made (a gRPC
/// channel's connection task) lives there too. The caller waits for `make` to finish, which
/// is why `make` must not wait for the caller's loop. The returned [`Running`] behaves as the
/// one of [`super::spawn_actor`]: it tells a stop from a panic, and stops the actor on
/// request; aborting it stops the whole thread. The thread ends with the actor.
///
/// # Errors
///
/// [`SpawnError::Make`] with the error of `make`, or [`SpawnError`] saying the thread could
/// not start it.
pub fn spawn_actor_on_thread<A, E, F>(
    make: F,
    span: tracing::Span,
) -> Result<(Addr<A>, Running), SpawnError<E>>
where
    A: Actor<Context = Context<A>>,
    E: Send + 'static,
    F: FnOnce() -> Result<A, E> + Send + 'static,
{
    let arbiter = Arbiter::new();
    let (mailbox, receiver) = channel::channel(MAILBOX_CAPACITY);
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let (end_tx, end_rx) = oneshot::channel::<JoinOutcome>();
    let (made_tx, made_rx) = std::sync::mpsc::sync_channel::<Result<(), E>>(1);
    let started = arbiter.spawn_fn(move || {
        let actor = match span.in_scope(make) {
            Ok(actor) => actor,
            Err(err) => {
                let _ = made_tx.send(Err(err));
                Arbiter::current().stop();
                return;
            }
        };
        let mut ctx = Context::<A>::with_receiver(receiver);
        ctx.spawn(
            stop_rx
                .into_actor(&actor)
                .map(|_, _, ctx: &mut Context<A>| ctx.stop()),
        );
        let handle = actix_rt::spawn(ctx.into_future(actor).instrument(span));
        let _ = made_tx.send(Ok(()));
        actix_rt::spawn(async move {
            let outcome = match handle.await {
                Ok(()) => JoinOutcome::Stopped,
                Err(err) if err.is_panic() => {
                    JoinOutcome::Panicked(panic_message(err.into_panic()))
                }
                Err(_) => JoinOutcome::Aborted,
            };
            let _ = end_tx.send(outcome);
            Arbiter::current().stop();
        });
    });
    if !started {
        return Err(SpawnError::NotStarted);
    }
    // A thread that dies before answering drops the sender, which ends the wait.
    match made_rx.recv() {
        Ok(Ok(())) => {}
        Ok(Err(err)) => return Err(SpawnError::Make(err)),
        Err(_) => return Err(SpawnError::Ended),
    }
    let done = end_rx
        .map(|outcome| outcome.unwrap_or(JoinOutcome::Aborted))
        .boxed_local()
        .shared();
    let running = Running::new(stop_tx, done, Abort::Thread(arbiter.handle()));
    Ok((Addr::new(mailbox), running))
}

#[cfg(test)]
mod tests {
    use std::thread::ThreadId;
    use std::time::Duration;

    use actix::{Handler, Message, MessageResult};

    use super::*;

    struct WhereAmI;

    impl Actor for WhereAmI {
        type Context = Context<Self>;
    }

    #[derive(Message)]
    #[rtype(result = "ThreadId")]
    struct Ask;

    impl Handler<Ask> for WhereAmI {
        type Result = MessageResult<Ask>;

        fn handle(&mut self, _: Ask, _: &mut Context<Self>) -> Self::Result {
            MessageResult(std::thread::current().id())
        }
    }

    #[derive(Message)]
    #[rtype(result = "()")]
    struct Explode;

    impl Handler<Explode> for WhereAmI {
        type Result = ();

        fn handle(&mut self, _: Explode, _: &mut Context<Self>) {
            panic!("asked to explode");
        }
    }

    #[actix_rt::test]
    async fn the_actor_runs_on_another_thread_and_stops_on_request() {
        let (addr, running) =
            spawn_actor_on_thread(|| Ok::<_, ()>(WhereAmI), tracing::Span::none()).unwrap();
        let there = addr.send(Ask).await.unwrap();
        assert_ne!(there, std::thread::current().id());
        let outcome = running.stop(Duration::from_secs(5)).await;
        assert_eq!(outcome, JoinOutcome::Stopped);
        assert!(addr.send(Ask).await.is_err(), "the actor is gone");
    }

    #[actix_rt::test]
    async fn a_panic_on_the_thread_is_reported_as_one() {
        let (addr, running) =
            spawn_actor_on_thread(|| Ok::<_, ()>(WhereAmI), tracing::Span::none()).unwrap();
        let _ = addr.send(Explode).await;
        let outcome = running.done().await;
        assert_eq!(
            outcome,
            JoinOutcome::Panicked("asked to explode".to_owned())
        );
    }

    #[actix_rt::test]
    async fn an_error_while_making_the_actor_is_returned() {
        let made = spawn_actor_on_thread::<WhereAmI, _, _>(
            || Err("endpoint refused"),
            tracing::Span::none(),
        );
        assert_eq!(made.err(), Some(SpawnError::Make("endpoint refused")));
    }
}
