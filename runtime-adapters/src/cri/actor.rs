//! The CRI adapter actor: answers the runtime port ([`RuntimeCall`]) through a [`CriClient`].
//!
//! Calls run concurrently (each is a future of the actor's context), so a slow pull never holds
//! up a status call; deadlines, metrics and error mapping are the client's. It also serves
//! container event subscriptions ([`SubscribeContainerEvents`]) from `GetContainerEvents`.

use actix::{
    Actor, ActorFutureExt, AsyncContext, Context, Handler, ResponseActFuture, ResponseFuture,
    WrapFuture,
};
use sergeant_messages::container_events::{ContainerEventStream, SubscribeContainerEvents};
use sergeant_messages::runtime::{RuntimeCall, RuntimeRequest, RuntimeResponse};
use sergeant_messages::runtime_error::RuntimeError;

use super::client::CriClient;
use super::events;

/// The runtime-port actor of a CRI runtime (containerd, CRI-O).
pub struct CriAdapter {
    client: CriClient,
}

impl CriAdapter {
    /// An adapter answering through `client`.
    #[must_use]
    pub fn new(client: CriClient) -> Self {
        Self { client }
    }
}

impl Actor for CriAdapter {
    type Context = Context<Self>;
}

impl Handler<RuntimeCall> for CriAdapter {
    type Result = ResponseFuture<Result<RuntimeResponse, RuntimeError>>;

    fn handle(&mut self, RuntimeCall(request): RuntimeCall, _: &mut Context<Self>) -> Self::Result {
        let client = self.client.clone();
        Box::pin(async move { dispatch(&client, request).await })
    }
}

impl Handler<SubscribeContainerEvents> for CriAdapter {
    type Result = ResponseActFuture<Self, Result<ContainerEventStream, RuntimeError>>;

    /// Opens `GetContainerEvents`; the stream is fed from this actor's context, so it ends
    /// with the adapter.
    fn handle(&mut self, _: SubscribeContainerEvents, _: &mut Context<Self>) -> Self::Result {
        let opening = events::open(self.client.clone());
        Box::pin(opening.into_actor(self).map(|opened, act, ctx| {
            let (stream, feed) = opened?;
            ctx.spawn(feed.into_actor(act));
            Ok(stream)
        }))
    }
}

/// Runs one port request as the CRI call of the same name: the request goes to the client as
/// it came, and the runtime's response comes back as it is.
async fn dispatch(
    client: &CriClient,
    request: RuntimeRequest,
) -> Result<RuntimeResponse, RuntimeError> {
    use RuntimeRequest as Rq;
    use RuntimeResponse as Rs;
    Ok(match request {
        Rq::Version(r) => Rs::Version(client.call(r).await?),
        Rq::Status(r) => Rs::Status(client.call(r).await?),
        Rq::RunPodSandbox(r) => Rs::RunPodSandbox(client.call(r).await?),
        Rq::StopPodSandbox(r) => Rs::StopPodSandbox(client.call(r).await?),
        Rq::RemovePodSandbox(r) => Rs::RemovePodSandbox(client.call(r).await?),
        Rq::PodSandboxStatus(r) => Rs::PodSandboxStatus(client.call(r).await?),
        Rq::ListPodSandbox(r) => Rs::ListPodSandbox(client.call(r).await?),
        Rq::CreateContainer(r) => Rs::CreateContainer(client.call(r).await?),
        Rq::StartContainer(r) => Rs::StartContainer(client.call(r).await?),
        Rq::StopContainer(r) => Rs::StopContainer(client.call(r).await?),
        Rq::RemoveContainer(r) => Rs::RemoveContainer(client.call(r).await?),
        Rq::UpdateContainerResources(r) => Rs::UpdateContainerResources(client.call(r).await?),
        Rq::ContainerStatus(r) => Rs::ContainerStatus(client.call(r).await?),
        Rq::ListContainers(r) => Rs::ListContainers(client.call(r).await?),
        Rq::ExecSync(r) => Rs::ExecSync(client.call(r).await?),
        Rq::PullImage(r) => Rs::PullImage(client.call(r).await?),
        Rq::ImageStatus(r) => Rs::ImageStatus(client.call(r).await?),
        Rq::ListImages(r) => Rs::ListImages(client.call(r).await?),
        Rq::RemoveImage(r) => Rs::RemoveImage(client.call(r).await?),
        Rq::ReopenContainerLog(r) => Rs::ReopenContainerLog(client.call(r).await?),
        Rq::Exec(r) => Rs::Exec(client.call(r).await?),
        Rq::Attach(r) => Rs::Attach(client.call(r).await?),
        Rq::PortForward(r) => Rs::PortForward(client.call(r).await?),
        Rq::ListContainerStats(r) => Rs::ListContainerStats(client.call(r).await?),
        Rq::ListPodSandboxStats(r) => Rs::ListPodSandboxStats(client.call(r).await?),
        Rq::ImageFsInfo(r) => Rs::ImageFsInfo(client.call(r).await?),
        Rq::UpdateRuntimeConfig(r) => Rs::UpdateRuntimeConfig(client.call(r).await?),
    })
}
