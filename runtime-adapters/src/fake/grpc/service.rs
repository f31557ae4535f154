//! [`FakeCriService`]: the CRI `RuntimeService` and `ImageService` answered by a
//! [`FakeAdapter`] actor, one runtime-port call per gRPC call.

use std::pin::Pin;

use actix::Addr;
use futures::{Stream, StreamExt};
use k8s_cri::v1::image_service_server::ImageService;
use k8s_cri::v1::runtime_service_server::RuntimeService;
use sergeant_messages::container_events::SubscribeContainerEvents;
use sergeant_messages::runtime::{cri, RuntimeCall, RuntimeOperation};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::record::Recorder;
use super::status::to_status;
use crate::fake::FakeAdapter;

/// The fake runtime behind the CRI gRPC services.
///
/// Exists so the fake answers over the wire exactly what it answers on the runtime port:
/// every call goes through the adapter actor (its metrics, its event stream), and every
/// error keeps its kind as a gRPC code. Calls the runtime port does not carry (stats per pod,
/// checkpoints, runtime config) answer `Unimplemented`, as a runtime without them does.
#[derive(Debug, Clone)]
pub struct FakeCriService {
    adapter: Addr<FakeAdapter>,
    recorder: Option<Recorder>,
}

impl FakeCriService {
    /// A service answering from `adapter`.
    #[must_use]
    pub fn new(adapter: Addr<FakeAdapter>) -> Self {
        Self {
            adapter,
            recorder: None,
        }
    }

    /// The same service, recording the requests [`Recorder`] keeps before answering them.
    #[must_use]
    pub fn recording(self, recorder: Recorder) -> Self {
        Self {
            recorder: Some(recorder),
            ..self
        }
    }

    /// Sends `request` to the adapter and returns its answer, or the error as a status.
    async fn call<R: RuntimeOperation>(&self, request: R) -> Result<Response<R::Response>, Status> {
        let answer = self
            .adapter
            .send(RuntimeCall(request.into_request()))
            .await
            .map_err(|mailbox| {
                Status::unavailable(format!("the fake runtime adapter is gone: {mailbox}"))
            })?
            .map_err(|error| to_status(&error))?;
        R::from_response(answer)
            .map(Response::new)
            .map_err(|error| to_status(&error))
    }
}

/// The answer of a call the fake does not implement, naming it.
fn unimplemented<T>(method: &str) -> Result<Response<T>, Status> {
    Err(Status::unimplemented(format!(
        "{method}: not implemented by the fake runtime"
    )))
}

/// Implements `$service` for [`FakeCriService`]: each listed method forwards its request to
/// the adapter (recording it first when the service records; the method's name is the
/// request type's without `Request`), each method after `unimplemented` answers
/// `Unimplemented`, and `$extra` items are copied in as written.
macro_rules! fake_service {
    (
        $service:ident;
        forwarded { $($method:ident: $request:ident => $response:ident;)* }
        unimplemented { $($missing:ident: $missing_request:ident => $missing_response:ident;)* }
        $($extra:tt)*
    ) => {
        #[tonic::async_trait]
        impl $service for FakeCriService {
            $(
                async fn $method(
                    &self,
                    request: Request<cri::$request>,
                ) -> Result<Response<cri::$response>, Status> {
                    let request = request.into_inner();
                    if let Some(recorder) = &self.recorder {
                        let method = stringify!($request);
                        recorder.record(method.strip_suffix("Request").unwrap_or(method), &request);
                    }
                    self.call(request).await
                }
            )*
            $(
                async fn $missing(
                    &self,
                    _: Request<cri::$missing_request>,
                ) -> Result<Response<cri::$missing_response>, Status> {
                    unimplemented(stringify!($missing))
                }
            )*
            $($extra)*
        }
    };
}

/// The container events of the fake, as the gRPC stream `GetContainerEvents` answers.
type EventStream = Pin<Box<dyn Stream<Item = Result<cri::ContainerEventResponse, Status>> + Send>>;

fake_service! {
    RuntimeService;
    forwarded {
        version: VersionRequest => VersionResponse;
        status: StatusRequest => StatusResponse;
        run_pod_sandbox: RunPodSandboxRequest => RunPodSandboxResponse;
        stop_pod_sandbox: StopPodSandboxRequest => StopPodSandboxResponse;
        remove_pod_sandbox: RemovePodSandboxRequest => RemovePodSandboxResponse;
        pod_sandbox_status: PodSandboxStatusRequest => PodSandboxStatusResponse;
        list_pod_sandbox: ListPodSandboxRequest => ListPodSandboxResponse;
        create_container: CreateContainerRequest => CreateContainerResponse;
        start_container: StartContainerRequest => StartContainerResponse;
        stop_container: StopContainerRequest => StopContainerResponse;
        remove_container: RemoveContainerRequest => RemoveContainerResponse;
        list_containers: ListContainersRequest => ListContainersResponse;
        container_status: ContainerStatusRequest => ContainerStatusResponse;
        reopen_container_log: ReopenContainerLogRequest => ReopenContainerLogResponse;
        exec_sync: ExecSyncRequest => ExecSyncResponse;
        exec: ExecRequest => ExecResponse;
        attach: AttachRequest => AttachResponse;
        port_forward: PortForwardRequest => PortForwardResponse;
        list_container_stats: ListContainerStatsRequest => ListContainerStatsResponse;
        list_pod_sandbox_stats: ListPodSandboxStatsRequest => ListPodSandboxStatsResponse;
        update_container_resources: UpdateContainerResourcesRequest => UpdateContainerResourcesResponse;
        update_runtime_config: UpdateRuntimeConfigRequest => UpdateRuntimeConfigResponse;
    }
    unimplemented {
        container_stats: ContainerStatsRequest => ContainerStatsResponse;
        pod_sandbox_stats: PodSandboxStatsRequest => PodSandboxStatsResponse;
        checkpoint_container: CheckpointContainerRequest => CheckpointContainerResponse;
        list_metric_descriptors: ListMetricDescriptorsRequest => ListMetricDescriptorsResponse;
        list_pod_sandbox_metrics: ListPodSandboxMetricsRequest => ListPodSandboxMetricsResponse;
        runtime_config: RuntimeConfigRequest => RuntimeConfigResponse;
    }

    type GetContainerEventsStream = EventStream;

    async fn get_container_events(
        &self,
        _: Request<cri::GetEventsRequest>,
    ) -> Result<Response<EventStream>, Status> {
        let events = self
            .adapter
            .send(SubscribeContainerEvents)
            .await
            .map_err(|mailbox| {
                Status::unavailable(format!("the fake runtime adapter is gone: {mailbox}"))
            })?
            .map_err(|error| to_status(&error))?;
        let stream = ReceiverStream::new(events).map(|item| item.map_err(|error| to_status(&error)));
        Ok(Response::new(Box::pin(stream)))
    }
}

fake_service! {
    ImageService;
    forwarded {
        list_images: ListImagesRequest => ListImagesResponse;
        image_status: ImageStatusRequest => ImageStatusResponse;
        pull_image: PullImageRequest => PullImageResponse;
        remove_image: RemoveImageRequest => RemoveImageResponse;
        image_fs_info: ImageFsInfoRequest => ImageFsInfoResponse;
    }
    unimplemented {}
}
