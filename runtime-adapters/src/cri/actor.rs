//! The CRI adapter actor: answers the runtime port ([`RuntimeCall`]) through a [`CriClient`].
//!
//! Calls run concurrently (each is a future of the actor's context), so a slow pull never holds
//! up a status call; deadlines, metrics and error mapping are the client's. It also serves
//! container event subscriptions ([`SubscribeContainerEvents`]) from `GetContainerEvents`.

use std::time::Duration;

use actix::{
    Actor, ActorFutureExt, AsyncContext, Context, Handler, ResponseActFuture, ResponseFuture,
    WrapFuture,
};
use sergeant_messages::container_events::{ContainerEventStream, SubscribeContainerEvents};
use sergeant_messages::runtime::{cri, RuntimeCall, RuntimeRequest, RuntimeResponse};
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

/// Runs one port request as the matching CRI call.
async fn dispatch(
    client: &CriClient,
    request: RuntimeRequest,
) -> Result<RuntimeResponse, RuntimeError> {
    use RuntimeRequest as Rq;
    use RuntimeResponse as Rs;
    Ok(match request {
        Rq::Version(_) => Rs::Version(client.version().await?),
        Rq::Status(r) => Rs::Status(client.status(r.verbose).await?),
        Rq::RunPodSandbox(r) => {
            let config = r.config.unwrap_or_default();
            let pod_sandbox_id = client.run_pod_sandbox(config, &r.runtime_handler).await?;
            Rs::RunPodSandbox(cri::RunPodSandboxResponse { pod_sandbox_id })
        }
        Rq::StopPodSandbox(r) => {
            client.stop_pod_sandbox(&r.pod_sandbox_id).await?;
            Rs::StopPodSandbox(cri::StopPodSandboxResponse {})
        }
        Rq::RemovePodSandbox(r) => {
            client.remove_pod_sandbox(&r.pod_sandbox_id).await?;
            Rs::RemovePodSandbox(cri::RemovePodSandboxResponse {})
        }
        Rq::PodSandboxStatus(r) => Rs::PodSandboxStatus(
            client
                .pod_sandbox_status(&r.pod_sandbox_id, r.verbose)
                .await?,
        ),
        Rq::ListPodSandbox(r) => {
            let items = client.list_pod_sandboxes(r.filter).await?;
            Rs::ListPodSandbox(cri::ListPodSandboxResponse { items })
        }
        Rq::CreateContainer(r) => {
            let container_id = client
                .create_container(
                    &r.pod_sandbox_id,
                    r.config.unwrap_or_default(),
                    r.sandbox_config.unwrap_or_default(),
                )
                .await?;
            Rs::CreateContainer(cri::CreateContainerResponse { container_id })
        }
        Rq::StartContainer(r) => {
            client.start_container(&r.container_id).await?;
            Rs::StartContainer(cri::StartContainerResponse {})
        }
        Rq::StopContainer(r) => {
            client.stop_container(&r.container_id, r.timeout).await?;
            Rs::StopContainer(cri::StopContainerResponse {})
        }
        Rq::UpdateContainerResources(r) => {
            client
                .update_container_resources(&r.container_id, r.linux.unwrap_or_default())
                .await?;
            Rs::UpdateContainerResources(cri::UpdateContainerResourcesResponse {})
        }
        Rq::RemoveContainer(r) => {
            client.remove_container(&r.container_id).await?;
            Rs::RemoveContainer(cri::RemoveContainerResponse {})
        }
        Rq::ContainerStatus(r) => {
            Rs::ContainerStatus(client.container_status(&r.container_id, r.verbose).await?)
        }
        Rq::ListContainers(r) => {
            let containers = client.list_containers(r.filter).await?;
            Rs::ListContainers(cri::ListContainersResponse { containers })
        }
        Rq::ExecSync(r) => {
            let timeout = Duration::from_secs(u64::try_from(r.timeout).unwrap_or(0));
            Rs::ExecSync(client.exec_sync(&r.container_id, r.cmd, timeout).await?)
        }
        Rq::PullImage(r) => {
            let image = r.image.unwrap_or_default();
            let image_ref = client.pull_image(image, r.auth, r.sandbox_config).await?;
            Rs::PullImage(cri::PullImageResponse { image_ref })
        }
        Rq::ImageStatus(r) => {
            let image = r.image.unwrap_or_default();
            Rs::ImageStatus(client.image_status(image, r.verbose).await?)
        }
        Rq::ListImages(r) => {
            let images = client.list_images(r.filter).await?;
            Rs::ListImages(cri::ListImagesResponse { images })
        }
        Rq::RemoveImage(r) => {
            let image = r.image.map(|i| i.image).unwrap_or_default();
            client.remove_image(&image).await?;
            Rs::RemoveImage(cri::RemoveImageResponse {})
        }
        Rq::ReopenContainerLog(r) => {
            client.reopen_container_log(&r.container_id).await?;
            Rs::ReopenContainerLog(cri::ReopenContainerLogResponse {})
        }
        Rq::Exec(r) => Rs::Exec(client.exec(r).await?),
        Rq::Attach(r) => Rs::Attach(client.attach(r).await?),
        Rq::PortForward(r) => Rs::PortForward(client.port_forward(r).await?),
        Rq::ListContainerStats(r) => {
            let stats = client.list_container_stats(r.filter).await?;
            Rs::ListContainerStats(cri::ListContainerStatsResponse { stats })
        }
        Rq::ImageFsInfo(_) => Rs::ImageFsInfo(client.image_fs_info().await?),
        Rq::UpdateRuntimeConfig(r) => {
            let pod_cidr = r
                .runtime_config
                .and_then(|c| c.network_config)
                .map(|n| n.pod_cidr)
                .unwrap_or_default();
            client.update_runtime_config(&pod_cidr).await?;
            Rs::UpdateRuntimeConfig(cri::UpdateRuntimeConfigResponse {})
        }
    })
}
