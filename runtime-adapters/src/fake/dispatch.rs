//! The one entry of [`FakeRuntime`]: a runtime-port request in, its CRI answer out.

use sergeant_messages::runtime::{cri, RuntimeRequest, RuntimeResponse};
use sergeant_messages::runtime_error::RuntimeError;

use super::FakeRuntime;
use crate::cri::{NETWORK_READY, RUNTIME_READY};

/// The runtime name `Version` reports.
const RUNTIME_NAME: &str = "sergeant-fake";
/// The CRI version the fake speaks.
const RUNTIME_API_VERSION: &str = "v1";
/// The kubelet-runtime API version `Version` reports (CRI's fixed `0.1.0`).
const KUBELET_API_VERSION: &str = "0.1.0";

impl FakeRuntime {
    /// Answers one runtime-port request, as a CRI runtime would.
    ///
    /// # Errors
    /// As containerd answers: `NotFound` for an unknown sandbox, container or image (image
    /// status and removes excepted), `AlreadyExists` for a sandbox or container name reused
    /// in its scope, `InvalidArgument` for a request missing what it needs, and
    /// `Other` (`FailedPrecondition`) for a call the object's state does not allow, such as
    /// starting a container twice. Every error names the request's operation.
    pub fn call(&mut self, request: RuntimeRequest) -> Result<RuntimeResponse, RuntimeError> {
        use RuntimeRequest as Rq;
        use RuntimeResponse as Rs;
        let request_operation = request.operation();
        Ok(match request {
            Rq::Version(_) => Rs::Version(version()),
            Rq::Status(_) => Rs::Status(status()),
            Rq::RunPodSandbox(rq) => Rs::RunPodSandbox(self.run_pod_sandbox(rq)?),
            Rq::StopPodSandbox(rq) => Rs::StopPodSandbox(self.stop_pod_sandbox(&rq)?),
            Rq::RemovePodSandbox(rq) => Rs::RemovePodSandbox(self.remove_pod_sandbox(&rq)),
            Rq::PodSandboxStatus(rq) => Rs::PodSandboxStatus(self.pod_sandbox_status(&rq)?),
            Rq::ListPodSandbox(rq) => Rs::ListPodSandbox(self.list_pod_sandbox(&rq)),
            Rq::CreateContainer(rq) => Rs::CreateContainer(self.create_container(rq)?),
            Rq::StartContainer(rq) => Rs::StartContainer(self.start_container(&rq)?),
            Rq::StopContainer(rq) => Rs::StopContainer(self.stop_container(&rq)?),
            Rq::RemoveContainer(rq) => Rs::RemoveContainer(self.remove_container(&rq)),
            Rq::UpdateContainerResources(rq) => {
                Rs::UpdateContainerResources(self.update_container_resources(rq)?)
            }
            Rq::ContainerStatus(rq) => Rs::ContainerStatus(self.container_status(&rq)?),
            Rq::ListContainers(rq) => Rs::ListContainers(self.list_containers(&rq)),
            Rq::ExecSync(rq) => Rs::ExecSync(self.exec_sync(&rq)?),
            Rq::PullImage(rq) => Rs::PullImage(self.pull_image(&rq)?),
            Rq::ImageStatus(rq) => Rs::ImageStatus(self.image_status(&rq)?),
            Rq::ListImages(rq) => Rs::ListImages(self.list_images(&rq)),
            Rq::RemoveImage(rq) => Rs::RemoveImage(self.remove_image(&rq)?),
            Rq::ReopenContainerLog(rq) => Rs::ReopenContainerLog(self.reopen_container_log(&rq)?),
            Rq::ListContainerStats(rq) => Rs::ListContainerStats(self.list_container_stats(&rq)),
            Rq::ListPodSandboxStats(rq) => {
                Rs::ListPodSandboxStats(self.list_pod_sandbox_stats(&rq))
            }
            Rq::ImageFsInfo(_) => Rs::ImageFsInfo(self.image_fs_info()),
            Rq::UpdateRuntimeConfig(rq) => {
                Rs::UpdateRuntimeConfig(self.update_runtime_config(&rq)?)
            }
            Rq::Exec(_) | Rq::Attach(_) | Rq::PortForward(_) => {
                return Err(RuntimeError::Unimplemented {
                    operation: request_operation,
                    message: "the fake runtime has no streaming server".to_owned(),
                })
            }
        })
    }
}

/// `Version`: the fake's name, this crate's version, CRI v1.
fn version() -> cri::VersionResponse {
    cri::VersionResponse {
        version: KUBELET_API_VERSION.to_string(),
        runtime_name: RUNTIME_NAME.to_string(),
        runtime_version: env!("CARGO_PKG_VERSION").to_string(),
        runtime_api_version: RUNTIME_API_VERSION.to_string(),
    }
}

/// `Status`: the runtime and its network are always ready.
fn status() -> cri::StatusResponse {
    let ready = |kind: &str| cri::RuntimeCondition {
        r#type: kind.to_string(),
        status: true,
        ..Default::default()
    };
    cri::StatusResponse {
        status: Some(cri::RuntimeStatus {
            conditions: vec![ready(RUNTIME_READY), ready(NETWORK_READY)],
        }),
        ..Default::default()
    }
}
