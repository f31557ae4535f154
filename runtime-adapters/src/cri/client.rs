//! `CriClient`: the typed, deadline-bounded, instrumented client of a CRI runtime.
//!
//! It speaks CRI v1 with the `k8s_cri::v1` types as they are; turning them into sergeant's
//! domain types is the job of the adapter actor above it.

use std::time::Duration;

use k8s_cri::v1::image_service_client::ImageServiceClient;
use k8s_cri::v1::runtime_service_client::RuntimeServiceClient;
use k8s_cri::v1::{
    AttachRequest, AttachResponse, AuthConfig, Container, ContainerConfig, ContainerEventResponse,
    ContainerFilter, ContainerStatusRequest, ContainerStatusResponse, CreateContainerRequest,
    ExecRequest, ExecResponse, ExecSyncRequest, ExecSyncResponse, GetEventsRequest, Image,
    ImageFilter, ImageSpec, ImageStatusRequest, ImageStatusResponse, LinuxContainerResources,
    ListContainersRequest, ListImagesRequest, ListPodSandboxRequest, PodSandbox, PodSandboxConfig,
    PodSandboxFilter, PodSandboxStatusRequest, PodSandboxStatusResponse, PortForwardRequest,
    PortForwardResponse, PullImageRequest, RemoveContainerRequest, RemoveImageRequest,
    RemovePodSandboxRequest, ReopenContainerLogRequest, RunPodSandboxRequest,
    StartContainerRequest, StatusRequest, StatusResponse, StopContainerRequest,
    StopPodSandboxRequest, UpdateContainerResourcesRequest, VersionRequest, VersionResponse,
};
use tonic::transport::Channel;

use super::call::call;
use super::connection::{ConnectError, Connection};
use super::error::{self, CriError};
use super::metrics::Operation;
use sergeant_config::Endpoint;

/// The CRI API version this client speaks, sent in `Version`.
pub const CRI_API_VERSION: &str = "v1";

/// Default deadline of heavy calls (pull, create, start, run sandbox, …): the kubelet's
/// `runtimeRequestTimeout` default.
pub const DEFAULT_RUNTIME_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// Deadline of cheap calls (version, status, lists, container and image status), capped by the
/// runtime request timeout. A runtime that cannot answer these in 10 s is unhealthy, and PLEG
/// should hear about it long before the heavy-call timeout.
pub const CHEAP_CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest message accepted from or sent to the runtime (lists on a full node exceed gRPC's 4 MiB
/// default).
const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// What a [`CriClient`] connects to and how long it waits.
///
/// Exists so the client can be built from the kubelet configuration in one value
/// (`containerRuntimeEndpoint`, `imageServiceEndpoint`, `runtimeRequestTimeout`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CriClientConfig {
    /// The runtime service endpoint.
    pub runtime_endpoint: Endpoint,
    /// The image service endpoint, when it differs from the runtime's.
    pub image_endpoint: Option<Endpoint>,
    /// Deadline of heavy calls; also caps the deadline of cheap ones.
    pub runtime_request_timeout: Duration,
}

impl CriClientConfig {
    /// A configuration with one endpoint for both services and the default request timeout.
    #[must_use]
    pub fn new(runtime_endpoint: Endpoint) -> Self {
        Self {
            runtime_endpoint,
            image_endpoint: None,
            runtime_request_timeout: DEFAULT_RUNTIME_REQUEST_TIMEOUT,
        }
    }

    /// Uses a separate endpoint for the image service.
    #[must_use]
    pub fn with_image_endpoint(mut self, image_endpoint: Endpoint) -> Self {
        self.image_endpoint = Some(image_endpoint);
        self
    }

    /// Sets the deadline of heavy calls.
    #[must_use]
    pub fn with_runtime_request_timeout(mut self, timeout: Duration) -> Self {
        self.runtime_request_timeout = timeout;
        self
    }
}

/// A client of a CRI runtime (containerd, CRI-O) and its image service.
///
/// Exists as the single place where sergeant talks gRPC to the runtime: every call gets a
/// deadline, is counted in the upstream runtime metrics, and fails with a [`CriError`] whose
/// kind the caller can act on. The connection is lazy and heals itself: a runtime that is down
/// gives fast `Unavailable` errors, and the same client works again once the runtime is back.
///
/// Cloning is cheap; clones share the connection. The client must be created inside a tokio
/// runtime, which must outlive it (the connection task runs there).
#[derive(Debug, Clone)]
pub struct CriClient {
    runtime: RuntimeServiceClient<Channel>,
    image: ImageServiceClient<Channel>,
    runtime_endpoint: Endpoint,
    image_endpoint: Endpoint,
    runtime_request_timeout: Duration,
}

impl CriClient {
    /// Builds a client for `config` without dialing anything.
    ///
    /// # Errors
    ///
    /// [`ConnectError`] when an endpoint cannot be used on this platform (npipe on Linux) or
    /// when called outside a tokio runtime.
    pub fn new(config: &CriClientConfig) -> Result<Self, ConnectError> {
        let runtime_connection = Connection::new(&config.runtime_endpoint)?;
        let image_connection = match &config.image_endpoint {
            Some(endpoint) if *endpoint != config.runtime_endpoint => Connection::new(endpoint)?,
            _ => runtime_connection.clone(),
        };
        let runtime = RuntimeServiceClient::new(runtime_connection.channel())
            .max_decoding_message_size(MAX_MESSAGE_BYTES)
            .max_encoding_message_size(MAX_MESSAGE_BYTES);
        let image = ImageServiceClient::new(image_connection.channel())
            .max_decoding_message_size(MAX_MESSAGE_BYTES)
            .max_encoding_message_size(MAX_MESSAGE_BYTES);
        Ok(Self {
            runtime,
            image,
            runtime_endpoint: runtime_connection.endpoint().clone(),
            image_endpoint: image_connection.endpoint().clone(),
            runtime_request_timeout: config.runtime_request_timeout,
        })
    }

    /// Builds a client for one endpoint with the default timeouts.
    ///
    /// # Errors
    ///
    /// As [`CriClient::new`].
    pub fn for_endpoint(endpoint: Endpoint) -> Result<Self, ConnectError> {
        Self::new(&CriClientConfig::new(endpoint))
    }

    /// The runtime service endpoint.
    #[must_use]
    pub fn runtime_endpoint(&self) -> &Endpoint {
        &self.runtime_endpoint
    }

    /// The image service endpoint (the runtime's unless configured apart).
    #[must_use]
    pub fn image_endpoint(&self) -> &Endpoint {
        &self.image_endpoint
    }

    /// The deadline of heavy calls.
    #[must_use]
    pub fn runtime_request_timeout(&self) -> Duration {
        self.runtime_request_timeout
    }

    /// The deadline of cheap calls.
    #[must_use]
    pub fn cheap_call_timeout(&self) -> Duration {
        CHEAP_CALL_TIMEOUT.min(self.runtime_request_timeout)
    }

    /// Asks the runtime for its name and versions; the handshake of a new connection.
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime, `Unavailable` when it cannot be reached.
    pub async fn version(&self) -> Result<VersionResponse, CriError> {
        let mut rt = self.runtime.clone();
        let message = VersionRequest {
            version: CRI_API_VERSION.to_string(),
        };
        call(
            Operation::Version,
            self.cheap_call_timeout(),
            message,
            |r| async move { rt.version(r).await },
        )
        .await
    }

    /// Asks the runtime for its status: the `RuntimeReady` and `NetworkReady` conditions (see
    /// [`super::RuntimeConditions`]), and with `verbose` the runtime's extra info.
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime.
    pub async fn status(&self, verbose: bool) -> Result<StatusResponse, CriError> {
        let mut rt = self.runtime.clone();
        let message = StatusRequest { verbose };
        call(
            Operation::Status,
            self.cheap_call_timeout(),
            message,
            |r| async move { rt.status(r).await },
        )
        .await
    }

    /// Creates and starts a pod sandbox; returns its id.
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime (e.g. `AlreadyExists`-like failures on a reused name).
    pub async fn run_pod_sandbox(
        &self,
        config: PodSandboxConfig,
        runtime_handler: &str,
    ) -> Result<String, CriError> {
        let mut rt = self.runtime.clone();
        let message = RunPodSandboxRequest {
            config: Some(config),
            runtime_handler: runtime_handler.to_string(),
        };
        let response = call(
            Operation::RunPodSandbox,
            self.runtime_request_timeout,
            message,
            |r| async move { rt.run_pod_sandbox(r).await },
        )
        .await?;
        Ok(response.pod_sandbox_id)
    }

    /// Stops a pod sandbox and every container in it. Stopping a stopped sandbox succeeds.
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime.
    pub async fn stop_pod_sandbox(&self, pod_sandbox_id: &str) -> Result<(), CriError> {
        let mut rt = self.runtime.clone();
        let message = StopPodSandboxRequest {
            pod_sandbox_id: pod_sandbox_id.to_string(),
        };
        call(
            Operation::StopPodSandbox,
            self.runtime_request_timeout,
            message,
            |r| async move { rt.stop_pod_sandbox(r).await },
        )
        .await
        .map(drop)
    }

    /// Removes a pod sandbox and its containers. Removing a missing sandbox succeeds.
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime.
    pub async fn remove_pod_sandbox(&self, pod_sandbox_id: &str) -> Result<(), CriError> {
        let mut rt = self.runtime.clone();
        let message = RemovePodSandboxRequest {
            pod_sandbox_id: pod_sandbox_id.to_string(),
        };
        call(
            Operation::RemovePodSandbox,
            self.runtime_request_timeout,
            message,
            |r| async move { rt.remove_pod_sandbox(r).await },
        )
        .await
        .map(drop)
    }

    /// Returns the status of a pod sandbox.
    ///
    /// # Errors
    ///
    /// [`CriError::NotFound`] for an unknown sandbox, else [`CriError`] from the runtime.
    pub async fn pod_sandbox_status(
        &self,
        pod_sandbox_id: &str,
        verbose: bool,
    ) -> Result<PodSandboxStatusResponse, CriError> {
        let mut rt = self.runtime.clone();
        let message = PodSandboxStatusRequest {
            pod_sandbox_id: pod_sandbox_id.to_string(),
            verbose,
        };
        call(
            Operation::PodSandboxStatus,
            self.cheap_call_timeout(),
            message,
            |r| async move { rt.pod_sandbox_status(r).await },
        )
        .await
    }

    /// Lists pod sandboxes, optionally filtered (id, state, label selector).
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime.
    pub async fn list_pod_sandboxes(
        &self,
        filter: Option<PodSandboxFilter>,
    ) -> Result<Vec<PodSandbox>, CriError> {
        let mut rt = self.runtime.clone();
        let message = ListPodSandboxRequest { filter };
        let response = call(
            Operation::ListPodSandbox,
            self.cheap_call_timeout(),
            message,
            |r| async move { rt.list_pod_sandbox(r).await },
        )
        .await?;
        Ok(response.items)
    }

    /// Creates a container in a sandbox; returns its id. The sandbox config is the one the
    /// sandbox was run with.
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime (`NotFound` if the image is not present).
    pub async fn create_container(
        &self,
        pod_sandbox_id: &str,
        config: ContainerConfig,
        sandbox_config: PodSandboxConfig,
    ) -> Result<String, CriError> {
        let mut rt = self.runtime.clone();
        let message = CreateContainerRequest {
            pod_sandbox_id: pod_sandbox_id.to_string(),
            config: Some(config),
            sandbox_config: Some(sandbox_config),
        };
        let response = call(
            Operation::CreateContainer,
            self.runtime_request_timeout,
            message,
            |r| async move { rt.create_container(r).await },
        )
        .await?;
        Ok(response.container_id)
    }

    /// Starts a created container.
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime.
    pub async fn start_container(&self, container_id: &str) -> Result<(), CriError> {
        let mut rt = self.runtime.clone();
        let message = StartContainerRequest {
            container_id: container_id.to_string(),
        };
        call(
            Operation::StartContainer,
            self.runtime_request_timeout,
            message,
            |r| async move { rt.start_container(r).await },
        )
        .await
        .map(drop)
    }

    /// Stops a container: SIGTERM (or the image's stop signal), then SIGKILL after
    /// `timeout_secs` (0 kills at once). The deadline is the grace period plus the runtime
    /// request timeout.
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime.
    pub async fn stop_container(
        &self,
        container_id: &str,
        timeout_secs: i64,
    ) -> Result<(), CriError> {
        let mut rt = self.runtime.clone();
        let grace = Duration::from_secs(u64::try_from(timeout_secs).unwrap_or(0));
        let message = StopContainerRequest {
            container_id: container_id.to_string(),
            timeout: timeout_secs,
        };
        call(
            Operation::StopContainer,
            grace.saturating_add(self.runtime_request_timeout),
            message,
            |r| async move { rt.stop_container(r).await },
        )
        .await
        .map(drop)
    }

    /// Sets the cgroup resources of a created or running container (an in-place resize).
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime: the container is gone, or the kernel refused a value
    /// (a memory limit below what the container uses).
    pub async fn update_container_resources(
        &self,
        container_id: &str,
        linux: LinuxContainerResources,
    ) -> Result<(), CriError> {
        let mut rt = self.runtime.clone();
        let message = UpdateContainerResourcesRequest {
            container_id: container_id.to_string(),
            linux: Some(linux),
            ..Default::default()
        };
        call(
            Operation::UpdateContainerResources,
            self.runtime_request_timeout,
            message,
            |r| async move { rt.update_container_resources(r).await },
        )
        .await
        .map(drop)
    }

    /// Removes a container (stopping it first if needed). Removing a missing one succeeds.
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime.
    pub async fn remove_container(&self, container_id: &str) -> Result<(), CriError> {
        let mut rt = self.runtime.clone();
        let message = RemoveContainerRequest {
            container_id: container_id.to_string(),
        };
        call(
            Operation::RemoveContainer,
            self.runtime_request_timeout,
            message,
            |r| async move { rt.remove_container(r).await },
        )
        .await
        .map(drop)
    }

    /// Asks the runtime to reopen a container's log file, after the log manager renamed it
    /// away, so the container's output goes to a fresh file at the original path.
    ///
    /// # Errors
    ///
    /// [`CriError::NotFound`] for an unknown container; `FailedPrecondition` from the runtime
    /// (as [`CriError`]) when the container is not running.
    pub async fn reopen_container_log(&self, container_id: &str) -> Result<(), CriError> {
        let mut rt = self.runtime.clone();
        let message = ReopenContainerLogRequest {
            container_id: container_id.to_string(),
        };
        call(
            Operation::ReopenContainerLog,
            self.runtime_request_timeout,
            message,
            |r| async move { rt.reopen_container_log(r).await },
        )
        .await
        .map(drop)
    }

    /// Returns the status of a container (state, exit code, reason, message, timestamps).
    ///
    /// # Errors
    ///
    /// [`CriError::NotFound`] for an unknown container, else [`CriError`] from the runtime.
    pub async fn container_status(
        &self,
        container_id: &str,
        verbose: bool,
    ) -> Result<ContainerStatusResponse, CriError> {
        let mut rt = self.runtime.clone();
        let message = ContainerStatusRequest {
            container_id: container_id.to_string(),
            verbose,
        };
        call(
            Operation::ContainerStatus,
            self.cheap_call_timeout(),
            message,
            |r| async move { rt.container_status(r).await },
        )
        .await
    }

    /// Lists containers, optionally filtered (id, state, sandbox, label selector).
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime.
    pub async fn list_containers(
        &self,
        filter: Option<ContainerFilter>,
    ) -> Result<Vec<Container>, CriError> {
        let mut rt = self.runtime.clone();
        let message = ListContainersRequest { filter };
        let response = call(
            Operation::ListContainers,
            self.cheap_call_timeout(),
            message,
            |r| async move { rt.list_containers(r).await },
        )
        .await?;
        Ok(response.containers)
    }

    /// Runs `cmd` in a running container and returns its output and exit code (exec probes).
    ///
    /// `timeout` (rounded up to whole seconds) is passed to the runtime; the call's deadline is
    /// that plus the runtime request timeout. A zero `timeout` lets the command run until the
    /// runtime request timeout.
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime; a command that exits non-zero is not an error.
    pub async fn exec_sync(
        &self,
        container_id: &str,
        cmd: Vec<String>,
        timeout: Duration,
    ) -> Result<ExecSyncResponse, CriError> {
        let mut rt = self.runtime.clone();
        let mut timeout_secs = timeout.as_secs();
        if timeout.subsec_nanos() > 0 {
            timeout_secs = timeout_secs.saturating_add(1);
        }
        let message = ExecSyncRequest {
            container_id: container_id.to_string(),
            cmd,
            timeout: i64::try_from(timeout_secs).unwrap_or(i64::MAX),
        };
        call(
            Operation::ExecSync,
            Duration::from_secs(timeout_secs).saturating_add(self.runtime_request_timeout),
            message,
            |r| async move { rt.exec_sync(r).await },
        )
        .await
    }

    /// Asks for the streaming URL of an interactive command (`kubectl exec`); the kubelet API
    /// proxies the client's upgraded connection to it.
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime.
    pub async fn exec(&self, request: ExecRequest) -> Result<ExecResponse, CriError> {
        let mut rt = self.runtime.clone();
        let timeout = self.runtime_request_timeout;
        call(Operation::Exec, timeout, request, |r| async move {
            rt.exec(r).await
        })
        .await
    }

    /// Asks for the streaming URL of a container's own streams (`kubectl attach`).
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime.
    pub async fn attach(&self, request: AttachRequest) -> Result<AttachResponse, CriError> {
        let mut rt = self.runtime.clone();
        let timeout = self.runtime_request_timeout;
        call(Operation::Attach, timeout, request, |r| async move {
            rt.attach(r).await
        })
        .await
    }

    /// Asks for the streaming URL of a pod's ports (`kubectl port-forward`).
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime.
    pub async fn port_forward(
        &self,
        request: PortForwardRequest,
    ) -> Result<PortForwardResponse, CriError> {
        let mut rt = self.runtime.clone();
        let timeout = self.runtime_request_timeout;
        call(Operation::PortForward, timeout, request, |r| async move {
            rt.port_forward(r).await
        })
        .await
    }

    /// Pulls `image` (with registry credentials if given, in the context of a sandbox if
    /// given); returns the image reference the runtime resolved it to (its id or digest). The
    /// spec goes as given, annotations included ([`image_named`] makes one of a name alone).
    ///
    /// # Errors
    ///
    /// [`CriError::NotFound`] naming the image when the registry does not have it, else
    /// [`CriError`] from the runtime.
    pub async fn pull_image(
        &self,
        image: ImageSpec,
        auth: Option<AuthConfig>,
        sandbox_config: Option<PodSandboxConfig>,
    ) -> Result<String, CriError> {
        let mut img = self.image.clone();
        let name = image.image.clone();
        let message = PullImageRequest {
            image: Some(image),
            auth,
            sandbox_config,
        };
        let response = call(
            Operation::PullImage,
            self.runtime_request_timeout,
            message,
            |r| async move { img.pull_image(r).await },
        )
        .await
        .map_err(|e| error::for_image_pull(e, &name))?;
        Ok(response.image_ref)
    }

    /// Returns the status of an image, asked with the spec as given; its `image` is `None`
    /// when the image is not present.
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime.
    pub async fn image_status(
        &self,
        image: ImageSpec,
        verbose: bool,
    ) -> Result<ImageStatusResponse, CriError> {
        let mut img = self.image.clone();
        let message = ImageStatusRequest {
            image: Some(image),
            verbose,
        };
        call(
            Operation::ImageStatus,
            self.cheap_call_timeout(),
            message,
            |r| async move { img.image_status(r).await },
        )
        .await
    }

    /// Lists the images present on the node, optionally filtered by image.
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime.
    pub async fn list_images(&self, filter: Option<ImageFilter>) -> Result<Vec<Image>, CriError> {
        let mut img = self.image.clone();
        let message = ListImagesRequest { filter };
        let response = call(
            Operation::ListImages,
            self.cheap_call_timeout(),
            message,
            |r| async move { img.list_images(r).await },
        )
        .await?;
        Ok(response.images)
    }

    /// Removes an image. Removing a missing image succeeds.
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime (e.g. the image is in use).
    pub async fn remove_image(&self, image: &str) -> Result<(), CriError> {
        let mut img = self.image.clone();
        let message = RemoveImageRequest {
            image: Some(image_named(image)),
        };
        call(
            Operation::RemoveImage,
            self.runtime_request_timeout,
            message,
            |r| async move { img.remove_image(r).await },
        )
        .await
        .map(drop)
    }

    /// Lists the resource usage (CPU, memory, writable layer) of the containers passing
    /// `filter`, for the kubelet's `/stats/summary`.
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime.
    pub async fn list_container_stats(
        &self,
        filter: Option<k8s_cri::v1::ContainerStatsFilter>,
    ) -> Result<Vec<k8s_cri::v1::ContainerStats>, CriError> {
        let mut rt = self.runtime.clone();
        let message = k8s_cri::v1::ListContainerStatsRequest { filter };
        let response = call(
            Operation::ListContainerStats,
            self.cheap_call_timeout(),
            message,
            |r| async move { rt.list_container_stats(r).await },
        )
        .await?;
        Ok(response.stats)
    }

    /// Returns the usage of the filesystems the image service stores images on, for the
    /// kubelet's `/stats/summary` (`runtime.imageFs`).
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime.
    pub async fn image_fs_info(&self) -> Result<k8s_cri::v1::ImageFsInfoResponse, CriError> {
        let mut img = self.image.clone();
        call(
            Operation::ImageFsInfo,
            self.cheap_call_timeout(),
            k8s_cri::v1::ImageFsInfoRequest {},
            |r| async move { img.image_fs_info(r).await },
        )
        .await
    }

    /// Hands the runtime the node's pod CIDR (comma-separated for dual stack), as upstream's
    /// kubelet does at start and whenever the Node's `spec.podCIDRs` changes; a runtime that
    /// renders its CNI configuration from a template (containerd's `conf_template`) needs it
    /// before pods get a network.
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime.
    pub async fn update_runtime_config(&self, pod_cidr: &str) -> Result<(), CriError> {
        let mut rt = self.runtime.clone();
        let message = k8s_cri::v1::UpdateRuntimeConfigRequest {
            runtime_config: Some(k8s_cri::v1::RuntimeConfig {
                network_config: Some(k8s_cri::v1::NetworkConfig {
                    pod_cidr: pod_cidr.to_owned(),
                }),
            }),
        };
        call(
            Operation::UpdateRuntimeConfig,
            self.cheap_call_timeout(),
            message,
            |r| async move { rt.update_runtime_config(r).await },
        )
        .await?;
        Ok(())
    }

    /// Opens the runtime's container event stream (evented PLEG). It has no deadline: a
    /// runtime that refuses the call answers at once, but one that accepts it may not answer
    /// before its first event, so the caller bounds the wait as it sees fit. The stream lives
    /// until the runtime or the caller ends it.
    ///
    /// # Errors
    ///
    /// [`CriError::Unimplemented`] on runtimes without the call (containerd 1.6): the caller
    /// falls back to relisting. Otherwise [`CriError`] from the runtime.
    pub async fn container_events(
        &self,
    ) -> Result<tonic::Streaming<ContainerEventResponse>, CriError> {
        let mut rt = self.runtime.clone();
        call(
            Operation::GetContainerEvents,
            self.cheap_call_timeout(),
            GetEventsRequest {},
            |r| async move { rt.get_container_events(r).await },
        )
        .await
    }
}

/// The image spec of a plain image reference, for a caller that has no pod to annotate it
/// with (tests, benchmarks, removals).
#[must_use]
pub fn image_named(image: &str) -> ImageSpec {
    ImageSpec {
        image: image.to_string(),
        ..ImageSpec::default()
    }
}
