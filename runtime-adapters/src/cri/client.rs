//! `CriClient`: the typed, deadline-bounded, instrumented client of a CRI runtime.
//!
//! It speaks CRI v1 with the `k8s_cri::v1` types as they are: [`CriClient::call`] takes a
//! request and answers its response, and the request's type names the RPC. What differs from
//! one RPC to the next (service, operation, deadline, the few fields the client fills in) is
//! one row of the table of RPCs below, the [`Rpc`] of its request.

use std::future::Future;
use std::time::Duration;

use k8s_cri::v1::image_service_client::ImageServiceClient;
use k8s_cri::v1::runtime_service_client::RuntimeServiceClient;
use k8s_cri::v1::{
    AttachRequest, AttachResponse, ContainerEventResponse, ContainerStatusRequest,
    ContainerStatusResponse, CreateContainerRequest, CreateContainerResponse, ExecRequest,
    ExecResponse, ExecSyncRequest, ExecSyncResponse, GetEventsRequest, ImageFsInfoRequest,
    ImageFsInfoResponse, ImageSpec, ImageStatusRequest, ImageStatusResponse,
    ListContainerStatsRequest, ListContainerStatsResponse, ListContainersRequest,
    ListContainersResponse, ListImagesRequest, ListImagesResponse, ListPodSandboxRequest,
    ListPodSandboxResponse, ListPodSandboxStatsRequest, ListPodSandboxStatsResponse,
    PodSandboxStatusRequest, PodSandboxStatusResponse, PortForwardRequest, PortForwardResponse,
    PullImageRequest, PullImageResponse, RemoveContainerRequest, RemoveContainerResponse,
    RemoveImageRequest, RemoveImageResponse, RemovePodSandboxRequest, RemovePodSandboxResponse,
    ReopenContainerLogRequest, ReopenContainerLogResponse, RunPodSandboxRequest,
    RunPodSandboxResponse, StartContainerRequest, StartContainerResponse, StatusRequest,
    StatusResponse, StopContainerRequest, StopContainerResponse, StopPodSandboxRequest,
    StopPodSandboxResponse, UpdateContainerResourcesRequest, UpdateContainerResourcesResponse,
    UpdateRuntimeConfigRequest, UpdateRuntimeConfigResponse, VersionRequest, VersionResponse,
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
    services: Services,
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
            services: Services { runtime, image },
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

    /// Sends `request` as the RPC its type names and returns the runtime's answer.
    ///
    /// The call gets its RPC's deadline (cheap calls [`Self::cheap_call_timeout`], heavy ones
    /// [`Self::runtime_request_timeout`], a stream none), is counted and timed under its
    /// [`Operation`], and passes the `cri::call` failpoint. The request goes as given but for
    /// the few fields its [`Rpc`] fills in (the API version of `Version`, an absent config
    /// sent empty, …), listed in the table of RPCs.
    ///
    /// # Errors
    ///
    /// [`CriError`] from the runtime (`NotFound` for an unknown sandbox, container or image),
    /// `Unavailable` when it cannot be reached, `DeadlineExceeded` when it did not answer in
    /// time.
    pub async fn call<R: Rpc>(&self, mut request: R) -> Result<R::Response, CriError> {
        request.prepare();
        let deadline = self.deadline_of(&request);
        let refine = request.refine_errors();
        call(R::OPERATION, deadline, request, |r| {
            R::send(&self.services, r)
        })
        .await
        .map_err(refine)
    }

    /// The deadline of sending `request`, prepared; `None` for a stream.
    fn deadline_of<R: Rpc>(&self, request: &R) -> Option<Duration> {
        let class = match R::DEADLINE {
            Deadline::Cheap => self.cheap_call_timeout(),
            Deadline::Heavy => self.runtime_request_timeout,
            Deadline::Stream => return None,
        };
        Some(class.saturating_add(request.extra_time()))
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

/// A CRI request [`CriClient::call`] sends: its type names the RPC and the answer it gets.
///
/// Implemented for every request of the runtime and image services that the client speaks,
/// by the table below; the trait is sealed.
pub trait Rpc: Send + Sized + 'static + sealed::Sealed {
    /// The runtime's answer.
    type Response: Send + 'static;
    /// The operation the call is counted and named under.
    const OPERATION: Operation;
    /// The call's deadline class.
    #[doc(hidden)]
    const DEADLINE: Deadline;

    /// Sends `request` through its service's gRPC client.
    #[doc(hidden)]
    fn send(
        services: &Services,
        request: tonic::Request<Self>,
    ) -> impl Future<Output = Result<tonic::Response<Self::Response>, tonic::Status>> + Send;

    /// Fills in or drops what the client sends its own way; by default nothing.
    #[doc(hidden)]
    fn prepare(&mut self) {}

    /// Time the call may take on top of its class's deadline; by default none.
    #[doc(hidden)]
    fn extra_time(&self) -> Duration {
        Duration::ZERO
    }

    /// Takes from the request what its errors should name, before it is sent, and answers
    /// the rewrite of the call's error; by default the error as it is.
    #[doc(hidden)]
    fn refine_errors(&self) -> impl FnOnce(CriError) -> CriError + Send + 'static {
        std::convert::identity
    }
}

/// The deadline class of an [`Rpc`].
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deadline {
    /// [`CHEAP_CALL_TIMEOUT`], capped by the runtime request timeout.
    Cheap,
    /// The runtime request timeout.
    Heavy,
    /// None: a server stream, which a deadline sent to the runtime would end, and whose
    /// opening waits for its first message.
    Stream,
}

/// The two gRPC services of the runtime. Not nameable outside this crate, so a request is
/// sent only through [`CriClient::call`], with its deadline and metrics.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct Services {
    runtime: RuntimeServiceClient<Channel>,
    image: ImageServiceClient<Channel>,
}

mod sealed {
    /// Keeps [`super::Rpc`] to the requests of the table.
    pub trait Sealed {}
}

/// Implements [`Rpc`] for each row: `Request => Response: service.method, Operation, Deadline`
/// and, in braces, the hooks of an RPC that sends its request other than as given. A row's doc
/// comment goes on its impl.
macro_rules! rpcs {
    ($(
        $(#[$doc:meta])*
        $request:ident => $response:ty:
            $service:ident.$method:ident, $operation:ident, $deadline:ident {
            $($hooks:tt)*
        }
    )*) => {$(
        impl sealed::Sealed for $request {}

        $(#[$doc])*
        impl Rpc for $request {
            type Response = $response;
            const OPERATION: Operation = Operation::$operation;
            const DEADLINE: Deadline = Deadline::$deadline;

            fn send(
                services: &Services,
                request: tonic::Request<Self>,
            ) -> impl Future<Output = Result<tonic::Response<$response>, tonic::Status>> + Send {
                let mut service = services.$service.clone();
                async move { service.$method(request).await }
            }

            $($hooks)*
        }
    )*};
}

/// A negative count of seconds as zero, as a duration.
fn seconds(secs: i64) -> Duration {
    Duration::from_secs(u64::try_from(secs).unwrap_or(0))
}

rpcs! {
    /// The runtime's name and versions; the handshake of a new connection.
    VersionRequest => VersionResponse:
        runtime.version, Version, Cheap {
        /// The client speaks [`CRI_API_VERSION`], whatever version the request names.
        fn prepare(&mut self) {
            CRI_API_VERSION.clone_into(&mut self.version);
        }
    }
    /// The `RuntimeReady` and `NetworkReady` conditions (see [`super::RuntimeConditions`]),
    /// and with `verbose` the runtime's extra info.
    StatusRequest => StatusResponse:
        runtime.status, Status, Cheap {}
    /// Creates and starts a pod sandbox.
    RunPodSandboxRequest => RunPodSandboxResponse:
        runtime.run_pod_sandbox, RunPodSandbox, Heavy {
        /// An absent config goes as an empty one.
        fn prepare(&mut self) {
            self.config.get_or_insert_default();
        }
    }
    /// Stops a pod sandbox and every container in it; stopping a stopped one succeeds.
    StopPodSandboxRequest => StopPodSandboxResponse:
        runtime.stop_pod_sandbox, StopPodSandbox, Heavy {}
    /// Removes a pod sandbox and its containers; removing a missing one succeeds.
    RemovePodSandboxRequest => RemovePodSandboxResponse:
        runtime.remove_pod_sandbox, RemovePodSandbox, Heavy {}
    /// The status of a pod sandbox; `NotFound` for an unknown one.
    PodSandboxStatusRequest => PodSandboxStatusResponse:
        runtime.pod_sandbox_status, PodSandboxStatus, Cheap {}
    /// The pod sandboxes passing the filter (id, state, label selector).
    ListPodSandboxRequest => ListPodSandboxResponse:
        runtime.list_pod_sandbox, ListPodSandbox, Cheap {}
    /// Creates a container in a sandbox, with the config the sandbox was run with.
    CreateContainerRequest => CreateContainerResponse:
        runtime.create_container, CreateContainer, Heavy {
        /// An absent config or sandbox config goes as an empty one.
        fn prepare(&mut self) {
            self.config.get_or_insert_default();
            self.sandbox_config.get_or_insert_default();
        }
    }
    /// Starts a created container.
    StartContainerRequest => StartContainerResponse:
        runtime.start_container, StartContainer, Heavy {}
    /// Stops a container: its stop signal, then SIGKILL after `timeout` seconds (0 kills at
    /// once).
    StopContainerRequest => StopContainerResponse:
        runtime.stop_container, StopContainer, Heavy {
        /// The grace period, on top of the runtime request timeout.
        fn extra_time(&self) -> Duration {
            seconds(self.timeout)
        }
    }
    /// Removes a container, stopping it first if needed; removing a missing one succeeds.
    RemoveContainerRequest => RemoveContainerResponse:
        runtime.remove_container, RemoveContainer, Heavy {}
    /// Sets the cgroup resources of a created or running container (an in-place resize).
    UpdateContainerResourcesRequest => UpdateContainerResourcesResponse:
        runtime.update_container_resources, UpdateContainerResources, Heavy {}
    /// The status of a container (state, exit code, reason, timestamps); `NotFound` for an
    /// unknown one.
    ContainerStatusRequest => ContainerStatusResponse:
        runtime.container_status, ContainerStatus, Cheap {}
    /// The containers passing the filter (id, state, sandbox, label selector).
    ListContainersRequest => ListContainersResponse:
        runtime.list_containers, ListContainers, Cheap {}
    /// Runs a command in a running container and answers its output and exit code; a command
    /// that exits non-zero is not an error.
    ExecSyncRequest => ExecSyncResponse:
        runtime.exec_sync, ExecSync, Heavy {
        /// A negative timeout goes as 0: no timeout but the call's deadline.
        fn prepare(&mut self) {
            self.timeout = self.timeout.max(0);
        }

        /// The command's timeout, on top of the runtime request timeout.
        fn extra_time(&self) -> Duration {
            seconds(self.timeout)
        }
    }
    /// Asks the runtime to reopen a container's log file after the log manager renamed it
    /// away; `FailedPrecondition` when the container is not running.
    ReopenContainerLogRequest => ReopenContainerLogResponse:
        runtime.reopen_container_log, ReopenContainerLog, Heavy {}
    /// The streaming URL of an interactive command (`kubectl exec`).
    ExecRequest => ExecResponse:
        runtime.exec, Exec, Heavy {}
    /// The streaming URL of a container's own streams (`kubectl attach`).
    AttachRequest => AttachResponse:
        runtime.attach, Attach, Heavy {}
    /// The streaming URL of a pod's ports (`kubectl port-forward`).
    PortForwardRequest => PortForwardResponse:
        runtime.port_forward, PortForward, Heavy {}
    /// The resource usage of the containers passing the filter, for `/stats/summary`.
    ListContainerStatsRequest => ListContainerStatsResponse:
        runtime.list_container_stats, ListContainerStats, Cheap {}
    /// The resource usage of the pod sandboxes passing the filter, each with its containers':
    /// on Windows, the pods' and containers' numbers for `/stats/summary`.
    ListPodSandboxStatsRequest => ListPodSandboxStatsResponse:
        runtime.list_pod_sandbox_stats, ListPodSandboxStats, Cheap {}
    /// Hands the runtime the node's pod CIDR (comma-separated for dual stack), as upstream's
    /// kubelet does at start and whenever the Node's `spec.podCIDRs` changes.
    UpdateRuntimeConfigRequest => UpdateRuntimeConfigResponse:
        runtime.update_runtime_config, UpdateRuntimeConfig, Cheap {
        /// An absent runtime or network config goes as an empty one (an empty pod CIDR).
        fn prepare(&mut self) {
            let config = self.runtime_config.get_or_insert_default();
            config.network_config.get_or_insert_default();
        }
    }
    /// The runtime's container event stream (evented PLEG): no deadline, since a runtime that
    /// has the call may not answer before its first event, so the caller bounds the wait;
    /// `Unimplemented` on runtimes without it (containerd 1.6).
    GetEventsRequest => tonic::Streaming<ContainerEventResponse>:
        runtime.get_container_events, GetContainerEvents, Stream {}
    /// Pulls an image (with registry credentials and in a sandbox's context, if given) and
    /// answers the reference the runtime resolved it to.
    PullImageRequest => PullImageResponse:
        image.pull_image, PullImage, Heavy {
        /// An absent image spec goes as an empty one.
        fn prepare(&mut self) {
            self.image.get_or_insert_default();
        }

        /// A registry's "not found", whatever its code, is `NotFound` naming the image.
        fn refine_errors(&self) -> impl FnOnce(CriError) -> CriError + Send + 'static {
            let image = self.image.as_ref().map(|spec| spec.image.clone()).unwrap_or_default();
            move |error| error::for_image_pull(error, &image)
        }
    }
    /// The status of an image; its `image` is `None` when the image is not present.
    ImageStatusRequest => ImageStatusResponse:
        image.image_status, ImageStatus, Cheap {
        /// An absent image spec goes as an empty one.
        fn prepare(&mut self) {
            self.image.get_or_insert_default();
        }
    }
    /// The images present on the node, optionally filtered by image.
    ListImagesRequest => ListImagesResponse:
        image.list_images, ListImages, Cheap {}
    /// Removes an image; removing a missing one succeeds.
    RemoveImageRequest => RemoveImageResponse:
        image.remove_image, RemoveImage, Heavy {
        /// The image goes by its name alone ([`image_named`]), as upstream's kubelet sends it:
        /// the spec's annotations, user-specified name and runtime handler are dropped.
        fn prepare(&mut self) {
            let name = self.image.take().map(|spec| spec.image).unwrap_or_default();
            self.image = Some(image_named(&name));
        }
    }
    /// The usage of the filesystems the image service stores images on, for
    /// `/stats/summary` (`runtime.imageFs`).
    ImageFsInfoRequest => ImageFsInfoResponse:
        image.image_fs_info, ImageFsInfo, Cheap {}
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use k8s_cri::v1::{
        ContainerStatsFilter, NetworkConfig, PodSandboxConfig, RuntimeConfig,
        WindowsContainerResources,
    };
    use sergeant_messages::runtime::RuntimeOperation;

    use super::*;

    /// `request` as the client sends it.
    fn prepared<R: Rpc>(mut request: R) -> R {
        request.prepare();
        request
    }

    /// A client whose heavy calls get `timeout`, of an endpoint nothing listens on (nothing
    /// is dialed).
    fn client(timeout: Duration) -> CriClient {
        #[cfg(unix)]
        let endpoint = "unix:///nonexistent/sergeant-cri.sock";
        #[cfg(windows)]
        let endpoint = "npipe://./pipe/sergeant-nonexistent";
        let endpoint = Endpoint::parse(endpoint).expect("an endpoint");
        let config = CriClientConfig::new(endpoint).with_runtime_request_timeout(timeout);
        CriClient::new(&config).expect("a lazy client")
    }

    #[test]
    fn each_port_request_is_counted_under_the_ports_operation_name() {
        macro_rules! same_name {
            ($($request:ident),*) => {$(
                assert_eq!(
                    <$request as Rpc>::OPERATION.name(),
                    <$request as RuntimeOperation>::OPERATION,
                    stringify!($request),
                );
            )*};
        }
        same_name!(
            VersionRequest,
            StatusRequest,
            RunPodSandboxRequest,
            StopPodSandboxRequest,
            RemovePodSandboxRequest,
            PodSandboxStatusRequest,
            ListPodSandboxRequest,
            CreateContainerRequest,
            StartContainerRequest,
            StopContainerRequest,
            RemoveContainerRequest,
            UpdateContainerResourcesRequest,
            ContainerStatusRequest,
            ListContainersRequest,
            ExecSyncRequest,
            PullImageRequest,
            ImageStatusRequest,
            ListImagesRequest,
            RemoveImageRequest,
            ReopenContainerLogRequest,
            ExecRequest,
            AttachRequest,
            PortForwardRequest,
            ListContainerStatsRequest,
            ListPodSandboxStatsRequest,
            ImageFsInfoRequest,
            UpdateRuntimeConfigRequest
        );
        assert_eq!(
            <GetEventsRequest as Rpc>::OPERATION.name(),
            sergeant_messages::container_events::OPERATION
        );
    }

    #[tokio::test]
    async fn status_and_list_calls_are_cheap_the_rest_heavy_and_the_event_stream_unbounded() {
        let heavy = Duration::from_secs(120);
        let cri = client(heavy);
        let cheap = Some(CHEAP_CALL_TIMEOUT);
        assert_eq!(cri.deadline_of(&VersionRequest::default()), cheap);
        assert_eq!(cri.deadline_of(&StatusRequest::default()), cheap);
        assert_eq!(cri.deadline_of(&PodSandboxStatusRequest::default()), cheap);
        assert_eq!(cri.deadline_of(&ListPodSandboxRequest::default()), cheap);
        assert_eq!(cri.deadline_of(&ContainerStatusRequest::default()), cheap);
        assert_eq!(cri.deadline_of(&ListContainersRequest::default()), cheap);
        assert_eq!(cri.deadline_of(&ImageStatusRequest::default()), cheap);
        assert_eq!(cri.deadline_of(&ListImagesRequest::default()), cheap);
        let stats = ListContainerStatsRequest {
            filter: Some(ContainerStatsFilter::default()),
        };
        assert_eq!(cri.deadline_of(&stats), cheap);
        let sandbox_stats = ListPodSandboxStatsRequest::default();
        assert_eq!(cri.deadline_of(&sandbox_stats), cheap);
        assert_eq!(cri.deadline_of(&ImageFsInfoRequest::default()), cheap);
        assert_eq!(
            cri.deadline_of(&UpdateRuntimeConfigRequest::default()),
            cheap
        );

        let heavy = Some(heavy);
        assert_eq!(cri.deadline_of(&RunPodSandboxRequest::default()), heavy);
        assert_eq!(cri.deadline_of(&StopPodSandboxRequest::default()), heavy);
        assert_eq!(cri.deadline_of(&RemovePodSandboxRequest::default()), heavy);
        assert_eq!(cri.deadline_of(&CreateContainerRequest::default()), heavy);
        assert_eq!(cri.deadline_of(&StartContainerRequest::default()), heavy);
        assert_eq!(cri.deadline_of(&StopContainerRequest::default()), heavy);
        assert_eq!(cri.deadline_of(&RemoveContainerRequest::default()), heavy);
        let resize = UpdateContainerResourcesRequest::default();
        assert_eq!(cri.deadline_of(&resize), heavy);
        assert_eq!(cri.deadline_of(&ExecSyncRequest::default()), heavy);
        assert_eq!(
            cri.deadline_of(&ReopenContainerLogRequest::default()),
            heavy
        );
        assert_eq!(cri.deadline_of(&ExecRequest::default()), heavy);
        assert_eq!(cri.deadline_of(&AttachRequest::default()), heavy);
        assert_eq!(cri.deadline_of(&PortForwardRequest::default()), heavy);
        assert_eq!(cri.deadline_of(&PullImageRequest::default()), heavy);
        assert_eq!(cri.deadline_of(&RemoveImageRequest::default()), heavy);

        assert_eq!(cri.deadline_of(&GetEventsRequest {}), None);
    }

    #[tokio::test]
    async fn cheap_calls_are_capped_by_a_short_runtime_request_timeout() {
        let cri = client(Duration::from_secs(4));
        let version = cri.deadline_of(&VersionRequest::default());
        assert_eq!(version, Some(Duration::from_secs(4)));
    }

    #[tokio::test]
    async fn a_stop_waits_out_its_grace_period_and_an_exec_its_timeout() {
        let heavy = Duration::from_secs(120);
        let cri = client(heavy);
        let stop = |timeout| StopContainerRequest {
            container_id: "c".to_owned(),
            timeout,
        };
        assert_eq!(
            cri.deadline_of(&stop(30)),
            Some(heavy + Duration::from_secs(30))
        );
        assert_eq!(cri.deadline_of(&stop(-5)), Some(heavy));
        let exec = |timeout| ExecSyncRequest {
            container_id: "c".to_owned(),
            cmd: vec!["true".to_owned()],
            timeout,
        };
        assert_eq!(
            cri.deadline_of(&exec(7)),
            Some(heavy + Duration::from_secs(7))
        );
        assert_eq!(cri.deadline_of(&prepared(exec(-3))), Some(heavy));
    }

    #[test]
    fn a_negative_stop_timeout_goes_as_given_a_negative_exec_timeout_as_zero() {
        let stop = StopContainerRequest {
            container_id: "c".to_owned(),
            timeout: -5,
        };
        assert_eq!(prepared(stop).timeout, -5);
        let exec = ExecSyncRequest {
            timeout: -3,
            ..ExecSyncRequest::default()
        };
        assert_eq!(prepared(exec).timeout, 0);
    }

    #[test]
    fn version_asks_in_the_clients_api_version() {
        assert_eq!(prepared(VersionRequest::default()).version, CRI_API_VERSION);
        let other = VersionRequest {
            version: "0.1.0".to_owned(),
        };
        assert_eq!(prepared(other).version, CRI_API_VERSION);
    }

    #[test]
    fn absent_configs_and_image_specs_go_empty() {
        let run = prepared(RunPodSandboxRequest::default());
        assert_eq!(run.config, Some(PodSandboxConfig::default()));
        let create = prepared(CreateContainerRequest::default());
        assert!(create.config.is_some() && create.sandbox_config.is_some());
        assert_eq!(
            prepared(PullImageRequest::default()).image,
            Some(ImageSpec::default())
        );
        let status = prepared(ImageStatusRequest::default());
        assert_eq!(status.image, Some(ImageSpec::default()));
        let update = prepared(UpdateRuntimeConfigRequest::default());
        assert_eq!(
            update.runtime_config,
            Some(RuntimeConfig {
                network_config: Some(NetworkConfig::default()),
            })
        );
    }

    #[test]
    fn requests_without_hooks_go_as_given() {
        let sandbox = RunPodSandboxRequest {
            config: Some(PodSandboxConfig {
                hostname: "h".to_owned(),
                ..PodSandboxConfig::default()
            }),
            runtime_handler: "kata".to_owned(),
        };
        assert_eq!(prepared(sandbox.clone()), sandbox);
        let spec = ImageSpec {
            image: "img:1".to_owned(),
            annotations: HashMap::from([("a".to_owned(), "b".to_owned())]),
            ..ImageSpec::default()
        };
        let pull = PullImageRequest {
            image: Some(spec),
            ..PullImageRequest::default()
        };
        assert_eq!(prepared(pull.clone()), pull);
        let cidr = UpdateRuntimeConfigRequest {
            runtime_config: Some(RuntimeConfig {
                network_config: Some(NetworkConfig {
                    pod_cidr: "10.0.0.0/24".to_owned(),
                }),
            }),
        };
        assert_eq!(prepared(cidr.clone()), cidr);
    }

    #[test]
    fn a_resize_goes_as_given_windows_resources_and_annotations_too() {
        let resize = UpdateContainerResourcesRequest {
            container_id: "c".to_owned(),
            linux: None,
            windows: Some(WindowsContainerResources::default()),
            annotations: HashMap::from([("a".to_owned(), "b".to_owned())]),
        };
        assert_eq!(prepared(resize.clone()), resize);
    }

    #[test]
    fn a_removal_names_the_image_alone() {
        let spec = ImageSpec {
            image: "img:1".to_owned(),
            annotations: HashMap::from([("a".to_owned(), "b".to_owned())]),
            user_specified_image: "img".to_owned(),
            runtime_handler: "kata".to_owned(),
        };
        let sent = prepared(RemoveImageRequest { image: Some(spec) });
        assert_eq!(sent.image, Some(image_named("img:1")));
        let sent = prepared(RemoveImageRequest { image: None });
        assert_eq!(sent.image, Some(image_named("")));
    }

    #[test]
    fn a_pull_that_the_registry_cannot_find_is_not_found_naming_the_image() {
        let pull = prepared(PullImageRequest {
            image: Some(image_named("r/x:1")),
            ..PullImageRequest::default()
        });
        let refine = pull.refine_errors();
        let error = refine(CriError::Other {
            operation: "pull_image",
            code: "Unknown".to_owned(),
            message: "failed to resolve reference: not found".to_owned(),
        });
        assert!(matches!(error, CriError::NotFound { .. }), "{error}");
        assert!(error.to_string().contains("r/x:1"), "{error}");
        let untouched = VersionRequest::default().refine_errors()(CriError::Other {
            operation: "version",
            code: "Unknown".to_owned(),
            message: "not found".to_owned(),
        });
        assert!(matches!(untouched, CriError::Other { .. }), "{untouched}");
    }
}
