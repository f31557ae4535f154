//! The runtime port: the one message every runtime adapter answers ([`RuntimeCall`]), whatever
//! runtime is behind it.
//!
//! The vocabulary is CRI v1's, the interface Kubernetes already defines between a kubelet and a
//! container runtime: a request is a CRI request message, the answer its CRI response. The fake
//! adapter for hollow nodes answers the same calls from memory. Callers use the typed form,
//! [`RuntimeOperation`], and never learn which adapter answered.

use actix::Message;
pub use k8s_cri::v1 as cri;

use crate::runtime_error::RuntimeError;

/// A call on the runtime port; answered by the runtime-adapter actor.
#[derive(Debug)]
pub struct RuntimeCall(pub RuntimeRequest);

impl Message for RuntimeCall {
    type Result = Result<RuntimeResponse, RuntimeError>;
}

/// A CRI request type that can travel on the runtime port, with the response it gets.
pub trait RuntimeOperation: Send + 'static {
    /// The CRI response to this request.
    type Response: Send + 'static;
    /// The upstream `operation_type` label of the call (`run_podsandbox`, `pull_image`, …).
    const OPERATION: &'static str;
    /// Wraps the request for the port.
    fn into_request(self) -> RuntimeRequest;
    /// Unwraps the answer.
    ///
    /// # Errors
    /// [`RuntimeError::Protocol`] when the adapter answered with another operation's response.
    fn from_response(response: RuntimeResponse) -> Result<Self::Response, RuntimeError>;
}

/// Declares the operations of the port once: the request and response enums, their operation
/// names, and the typed [`RuntimeOperation`] of each CRI request.
macro_rules! runtime_operations {
    ($( $variant:ident : $request:ident => $response:ident, $operation:literal; )*) => {
        /// Every request the runtime port carries.
        // Moved once per call through a mailbox; boxing each variant would cost an allocation
        // per call to save a copy.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone)]
        pub enum RuntimeRequest {
            $(
                #[doc = concat!("CRI `", stringify!($request), "`.")]
                $variant(cri::$request),
            )*
        }

        /// Every answer the runtime port carries, one per request.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone)]
        pub enum RuntimeResponse {
            $(
                #[doc = concat!("CRI `", stringify!($response), "`.")]
                $variant(cri::$response),
            )*
        }

        impl RuntimeRequest {
            /// The upstream `operation_type` label of this call.
            #[must_use]
            pub fn operation(&self) -> &'static str {
                match self {
                    $( Self::$variant(_) => $operation, )*
                }
            }
        }

        impl RuntimeResponse {
            /// The upstream `operation_type` label of the call this answers.
            #[must_use]
            pub fn operation(&self) -> &'static str {
                match self {
                    $( Self::$variant(_) => $operation, )*
                }
            }
        }

        $(
            impl RuntimeOperation for cri::$request {
                type Response = cri::$response;
                const OPERATION: &'static str = $operation;

                fn into_request(self) -> RuntimeRequest {
                    RuntimeRequest::$variant(self)
                }

                fn from_response(response: RuntimeResponse) -> Result<cri::$response, RuntimeError> {
                    match response {
                        RuntimeResponse::$variant(answer) => Ok(answer),
                        other => Err(RuntimeError::Protocol {
                            operation: $operation,
                            message: format!("answered with a {} response", other.operation()),
                        }),
                    }
                }
            }
        )*
    };
}

runtime_operations! {
    Version: VersionRequest => VersionResponse, "version";
    Status: StatusRequest => StatusResponse, "status";
    RunPodSandbox: RunPodSandboxRequest => RunPodSandboxResponse, "run_podsandbox";
    StopPodSandbox: StopPodSandboxRequest => StopPodSandboxResponse, "stop_podsandbox";
    RemovePodSandbox: RemovePodSandboxRequest => RemovePodSandboxResponse, "remove_podsandbox";
    PodSandboxStatus: PodSandboxStatusRequest => PodSandboxStatusResponse, "podsandbox_status";
    ListPodSandbox: ListPodSandboxRequest => ListPodSandboxResponse, "list_podsandbox";
    CreateContainer: CreateContainerRequest => CreateContainerResponse, "create_container";
    StartContainer: StartContainerRequest => StartContainerResponse, "start_container";
    StopContainer: StopContainerRequest => StopContainerResponse, "stop_container";
    RemoveContainer: RemoveContainerRequest => RemoveContainerResponse, "remove_container";
    UpdateContainerResources: UpdateContainerResourcesRequest => UpdateContainerResourcesResponse, "update_container";
    ContainerStatus: ContainerStatusRequest => ContainerStatusResponse, "container_status";
    ListContainers: ListContainersRequest => ListContainersResponse, "list_containers";
    ExecSync: ExecSyncRequest => ExecSyncResponse, "exec_sync";
    PullImage: PullImageRequest => PullImageResponse, "pull_image";
    ImageStatus: ImageStatusRequest => ImageStatusResponse, "image_status";
    ListImages: ListImagesRequest => ListImagesResponse, "list_images";
    RemoveImage: RemoveImageRequest => RemoveImageResponse, "remove_image";
    ReopenContainerLog: ReopenContainerLogRequest => ReopenContainerLogResponse, "reopen_container_log";
    Exec: ExecRequest => ExecResponse, "exec";
    Attach: AttachRequest => AttachResponse, "attach";
    PortForward: PortForwardRequest => PortForwardResponse, "port_forward";
    ListContainerStats: ListContainerStatsRequest => ListContainerStatsResponse, "list_container_stats";
    ListPodSandboxStats: ListPodSandboxStatsRequest => ListPodSandboxStatsResponse, "list_podsandbox_stats";
    ImageFsInfo: ImageFsInfoRequest => ImageFsInfoResponse, "image_fs_info";
    UpdateRuntimeConfig: UpdateRuntimeConfigRequest => UpdateRuntimeConfigResponse, "update_runtime_config";
}
