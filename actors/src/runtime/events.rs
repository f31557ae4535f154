//! Container event subscriptions through the runtime-adapter actor: each is passed to the
//! adapter in service and relayed from it, and the relay ends when that adapter is swapped
//! out, so the subscriber subscribes again and gets the new adapter's events.

use actix::{
    ActorFutureExt, AsyncContext, Context, Handler, ResponseActFuture, ResponseFuture, WrapFuture,
};
use sergeant_messages::container_events::{
    ContainerEventItem, ContainerEventStream, SubscribeContainerEvents, WaitForAdapterSwap, BUFFER,
    OPERATION,
};
use sergeant_messages::runtime_error::RuntimeError;
use tokio::sync::{mpsc, watch};

use super::adapter::RuntimeAdapter;

impl Handler<SubscribeContainerEvents> for RuntimeAdapter {
    type Result = ResponseActFuture<Self, Result<ContainerEventStream, RuntimeError>>;

    fn handle(&mut self, request: SubscribeContainerEvents, _: &mut Context<Self>) -> Self::Result {
        let Some((id, events)) = self.event_source() else {
            return Box::pin(actix::fut::ready(Err(RuntimeError::Unavailable {
                operation: OPERATION,
                message: "no runtime adapter in service".to_owned(),
            })));
        };
        let Some(events) = events else {
            self.events_refused_by = Some(id);
            return Box::pin(actix::fut::ready(Err(RuntimeError::Unimplemented {
                operation: OPERATION,
                message: "the runtime adapter streams no container events".to_owned(),
            })));
        };
        Box::pin(
            async move { events.send(request).await }
                .into_actor(self)
                .map(move |answer, act, ctx| {
                    let answer = answer.map_err(|_| RuntimeError::Unavailable {
                        operation: OPERATION,
                        message: "the runtime adapter died during the subscription".to_owned(),
                    })?;
                    if let Err(RuntimeError::Unimplemented { .. }) = &answer {
                        act.events_refused_by = Some(id);
                    }
                    let (to, relayed) = mpsc::channel(BUFFER);
                    ctx.spawn(relay(answer?, to, act.in_service.subscribe(), id).into_actor(act));
                    Ok(relayed)
                }),
        )
    }
}

impl Handler<WaitForAdapterSwap> for RuntimeAdapter {
    type Result = ResponseFuture<()>;

    /// Resolves once a backend other than the one that last refused a subscription is in
    /// service (at once when that happened already).
    fn handle(&mut self, _: WaitForAdapterSwap, _: &mut Context<Self>) -> Self::Result {
        let refused_by = self.events_refused_by;
        let mut in_service = self.in_service.subscribe();
        Box::pin(async move {
            // An error means this actor is gone: its subscriber is restarted with it.
            let _ = in_service
                .wait_for(|current| Some(*current) != refused_by)
                .await;
        })
    }
}

/// Passes the events of backend `id` on to the subscriber until the stream ends, the
/// subscriber leaves, or another backend is in service.
async fn relay(
    mut from: ContainerEventStream,
    to: mpsc::Sender<ContainerEventItem>,
    mut in_service: watch::Receiver<u64>,
    id: u64,
) {
    loop {
        tokio::select! {
            item = from.recv() => match item {
                Some(item) => {
                    if to.send(item).await.is_err() {
                        return;
                    }
                }
                None => return,
            },
            _ = in_service.wait_for(|current| *current != id) => return,
            () = to.closed() => return,
        }
    }
}
