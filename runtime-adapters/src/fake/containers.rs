//! Container calls of the fake runtime: create, start, stop, remove, status, list and exec,
//! with containerd's rules. A stop ends a hollow container at once, the way a well-behaved
//! process would end.

use sergeant_messages::runtime::{cri, RuntimeOperation};
use sergeant_messages::runtime_error::RuntimeError;

use super::container::{log_path, Container, Phase};
use super::errors::{already_exists, failed_precondition, invalid_argument, not_found};
use super::events::Kind;
use super::FakeRuntime;

/// Exit code of a process ended by SIGKILL (128 + 9), as a stop without grace period gives.
const KILLED_EXIT_CODE: i32 = 137;

/// The error for a call that needs `id` to be in another state.
fn wrong_state(operation: &'static str, id: &str, phase: Phase) -> RuntimeError {
    failed_precondition(
        operation,
        format!(
            "container {id:?} is in {} state",
            phase.state().as_str_name()
        ),
    )
}

impl FakeRuntime {
    /// The container `id`, or `NotFound` for `operation`.
    fn container(&self, operation: &'static str, id: &str) -> Result<&Container, RuntimeError> {
        self.containers
            .get(id)
            .ok_or_else(|| not_found(operation, format!("container {id:?}")))
    }

    /// `CreateContainer`: a CREATED container in a READY sandbox, from a pulled image.
    pub(super) fn create_container(
        &mut self,
        request: cri::CreateContainerRequest,
    ) -> Result<cri::CreateContainerResponse, RuntimeError> {
        let operation = cri::CreateContainerRequest::OPERATION;
        let sandbox_id = request.pod_sandbox_id;
        let config = request
            .config
            .ok_or_else(|| invalid_argument(operation, "container config is required"))?;
        let metadata = config
            .metadata
            .clone()
            .filter(|metadata| !metadata.name.is_empty())
            .ok_or_else(|| {
                invalid_argument(operation, "container config must include metadata.name")
            })?;
        let sandbox = self
            .sandboxes
            .get(&sandbox_id)
            .ok_or_else(|| not_found(operation, format!("sandbox {sandbox_id:?}")))?;
        if !sandbox.ready {
            return Err(failed_precondition(
                operation,
                format!("sandbox {sandbox_id:?} is not ready"),
            ));
        }
        let wanted = config.image.as_ref().map_or("", |spec| spec.image.as_str());
        if wanted.is_empty() {
            return Err(invalid_argument(
                operation,
                "container config must include an image",
            ));
        }
        let image = self
            .images
            .resolve(wanted)
            .ok_or_else(|| not_found(operation, format!("image {wanted:?}")))?
            .to_string();
        if self
            .containers
            .values()
            .any(|other| other.sandbox_id == sandbox_id && other.metadata == metadata)
        {
            return Err(already_exists(
                operation,
                format!(
                    "container name \"{}_{}\" in sandbox {sandbox_id:?}",
                    metadata.name, metadata.attempt
                ),
            ));
        }
        let container = Container {
            log_path: log_path(request.sandbox_config.as_ref(), &config),
            sandbox_id,
            metadata,
            image,
            created_at: self.clock.now_ns(),
            phase: Phase::Created,
            resources: config.linux.as_ref().and_then(|l| l.resources.clone()),
            labels: config.labels,
            annotations: config.annotations,
        };
        let id = self.ids.next_id();
        let sandbox_id = container.sandbox_id.clone();
        self.containers.insert(id.clone(), container);
        self.emit(Kind::ContainerCreatedEvent, &id, &sandbox_id);
        Ok(cri::CreateContainerResponse { container_id: id })
    }

    /// `StartContainer`: CREATED → RUNNING; any other state is an error.
    pub(super) fn start_container(
        &mut self,
        request: &cri::StartContainerRequest,
    ) -> Result<cri::StartContainerResponse, RuntimeError> {
        let operation = cri::StartContainerRequest::OPERATION;
        let id = &request.container_id;
        let container = self.container(operation, id)?;
        if !matches!(container.phase, Phase::Created) {
            return Err(wrong_state(operation, id, container.phase));
        }
        let sandbox_id = &container.sandbox_id;
        if !self
            .sandboxes
            .get(sandbox_id)
            .is_some_and(|sandbox| sandbox.ready)
        {
            return Err(failed_precondition(
                operation,
                format!("sandbox {sandbox_id:?} of container {id:?} is not ready"),
            ));
        }
        let sandbox_id = sandbox_id.clone();
        let started_at = self.clock.now_ns();
        if let Some(container) = self.containers.get_mut(id) {
            container.phase = Phase::Running { started_at };
        }
        self.emit(Kind::ContainerStartedEvent, id, &sandbox_id);
        Ok(cri::StartContainerResponse {})
    }

    /// `StopContainer`: a running container exits — code 0 when given a grace period (it
    /// honours SIGTERM), 137 when not (SIGKILL). Stopping a container that is not running is
    /// a no-op.
    pub(super) fn stop_container(
        &mut self,
        request: &cri::StopContainerRequest,
    ) -> Result<cri::StopContainerResponse, RuntimeError> {
        let id = &request.container_id;
        let sandbox_id = self
            .container(cri::StopContainerRequest::OPERATION, id)?
            .sandbox_id
            .clone();
        let finished_at = self.clock.now_ns();
        let exit_code = if request.timeout > 0 {
            0
        } else {
            KILLED_EXIT_CODE
        };
        let stopped = self
            .containers
            .get_mut(id)
            .is_some_and(|container| container.exit(finished_at, exit_code));
        if stopped {
            self.emit(Kind::ContainerStoppedEvent, id, &sandbox_id);
        }
        Ok(cri::StopContainerResponse {})
    }

    /// `UpdateContainerResources`: a created or running container takes the new resources,
    /// as containerd's does; an exited one cannot be updated.
    pub(super) fn update_container_resources(
        &mut self,
        request: cri::UpdateContainerResourcesRequest,
    ) -> Result<cri::UpdateContainerResourcesResponse, RuntimeError> {
        let operation = cri::UpdateContainerResourcesRequest::OPERATION;
        let id = &request.container_id;
        let container = self.container(operation, id)?;
        if matches!(container.phase, Phase::Exited { .. }) {
            return Err(wrong_state(operation, id, container.phase));
        }
        if let Some(container) = self.containers.get_mut(id) {
            container.resources = request.linux;
        }
        Ok(cri::UpdateContainerResourcesResponse {})
    }

    /// Kills every running container of `sandbox_id`, as stopping the sandbox does.
    pub(super) fn kill_containers_in(&mut self, sandbox_id: &str) {
        let finished_at = self.clock.now_ns();
        let killed: Vec<String> = self
            .containers
            .iter_mut()
            .filter(|(_, container)| container.sandbox_id == sandbox_id)
            .filter_map(|(id, container)| {
                container
                    .exit(finished_at, KILLED_EXIT_CODE)
                    .then(|| id.clone())
            })
            .collect();
        for id in killed {
            self.emit(Kind::ContainerStoppedEvent, &id, sandbox_id);
        }
    }

    /// `ReopenContainerLog`: the fake writes no logs, so there is nothing to reopen; as in
    /// containerd, the container must exist and be running.
    pub(super) fn reopen_container_log(
        &self,
        request: &cri::ReopenContainerLogRequest,
    ) -> Result<cri::ReopenContainerLogResponse, RuntimeError> {
        let operation = cri::ReopenContainerLogRequest::OPERATION;
        let id = &request.container_id;
        let container = self.container(operation, id)?;
        if !matches!(container.phase, Phase::Running { .. }) {
            return Err(wrong_state(operation, id, container.phase));
        }
        Ok(cri::ReopenContainerLogResponse {})
    }

    /// `RemoveContainer`: the container is gone, whatever its state; removing an unknown
    /// container succeeds.
    pub(super) fn remove_container(
        &mut self,
        request: &cri::RemoveContainerRequest,
    ) -> cri::RemoveContainerResponse {
        let id = &request.container_id;
        if let Some(container) = self.containers.remove(id) {
            self.emit(Kind::ContainerDeletedEvent, id, &container.sandbox_id);
        }
        cri::RemoveContainerResponse {}
    }

    /// `ContainerStatus`: state, times, exit, image and log path of one container.
    pub(super) fn container_status(
        &self,
        request: &cri::ContainerStatusRequest,
    ) -> Result<cri::ContainerStatusResponse, RuntimeError> {
        let id = &request.container_id;
        let container = self.container(cri::ContainerStatusRequest::OPERATION, id)?;
        Ok(cri::ContainerStatusResponse {
            status: Some(container.status(id)),
            ..Default::default()
        })
    }

    /// `ListContainers`: the containers passing the filter.
    pub(super) fn list_containers(
        &self,
        request: &cri::ListContainersRequest,
    ) -> cri::ListContainersResponse {
        let everything = cri::ContainerFilter::default();
        let filter = request.filter.as_ref().unwrap_or(&everything);
        let containers = self
            .containers
            .iter()
            .filter(|(id, container)| container.passes(id, filter))
            .map(|(id, container)| container.entry(id))
            .collect();
        cri::ListContainersResponse { containers }
    }

    /// `ExecSync`: succeeds with no output in a running container (a hollow container has
    /// nothing to run the command in).
    pub(super) fn exec_sync(
        &self,
        request: &cri::ExecSyncRequest,
    ) -> Result<cri::ExecSyncResponse, RuntimeError> {
        let operation = cri::ExecSyncRequest::OPERATION;
        let id = &request.container_id;
        let container = self.container(operation, id)?;
        if !matches!(container.phase, Phase::Running { .. }) {
            return Err(wrong_state(operation, id, container.phase));
        }
        Ok(cri::ExecSyncResponse::default())
    }
}
