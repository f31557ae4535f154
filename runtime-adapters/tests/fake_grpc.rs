//! The fake runtime served over CRI's gRPC wire (`sergeant_runtime_adapters::fake::grpc`),
//! reached by the ordinary CRI client: a unix socket here, a named pipe when this test is
//! built for Windows and run under Wine (tests/windows/run.sh).
//!
//! What it shows: a pod's whole lifecycle makes the round trip with its answers intact, the
//! runtime port's error kinds survive the wire, container events stream to the client, a
//! recording server keeps the requests that shape a pod, one JSON line each, and the CRI
//! adapter sends image specs whole.

#[cfg_attr(unix, path = "fake_grpc/endpoint_unix.rs")]
#[cfg_attr(windows, path = "fake_grpc/endpoint_windows.rs")]
mod endpoint;

use std::collections::HashMap;
use std::future::Future;
use std::path::Path;
use std::time::Duration;

use actix::Actor;
use sergeant_messages::runtime::{RuntimeCall, RuntimeOperation, RuntimeRequest};
use sergeant_messages::runtime_error::RuntimeError;
use sergeant_runtime_adapters::cri::api::{
    ContainerConfig, ContainerFilter, ContainerMetadata, ContainerState, ContainerStatusRequest,
    CreateContainerRequest, GetEventsRequest, ImageSpec, ImageStatusRequest, ListContainersRequest,
    ListPodSandboxRequest, PodSandboxConfig, PodSandboxMetadata, PodSandboxStatusRequest,
    PullImageRequest, RemoveContainerRequest, RemovePodSandboxRequest, RunPodSandboxRequest,
    StartContainerRequest, StopContainerRequest, StopPodSandboxRequest, VersionRequest,
};
use sergeant_runtime_adapters::cri::{image_named, CriAdapter, CriClient, CriClientConfig};
use sergeant_runtime_adapters::fake::grpc::{Listener, Recorder};
use sergeant_runtime_adapters::fake::{FakeAdapter, FakeRuntime};
use tokio::sync::oneshot;

/// How long any one step may take before the test fails.
const STEP: Duration = Duration::from_secs(10);

/// Runs `test` with a CRI client of a fake runtime served on a fresh endpoint, then stops the
/// server and checks it stopped cleanly.
fn with_served_fake<F>(runtime: FakeRuntime, test: impl FnOnce(CriClient) -> F)
where
    F: Future<Output = ()>,
{
    with_recording_fake(runtime, None, test);
}

/// As [`with_served_fake`], the server recording requests with `recorder` when one is given.
fn with_recording_fake<F>(
    runtime: FakeRuntime,
    recorder: Option<Recorder>,
    test: impl FnOnce(CriClient) -> F,
) where
    F: Future<Output = ()>,
{
    let place = endpoint::fresh();
    actix_rt::System::new().block_on(async move {
        let mut listener = Listener::bind(place.endpoint()).expect("bind the fake CRI server");
        if let Some(recorder) = recorder {
            listener = listener.recording(recorder);
        }
        let (stop, stopped) = oneshot::channel::<()>();
        let server = actix_rt::spawn(listener.serve(FakeAdapter::new(runtime).start(), async {
            drop(stopped.await);
        }));
        let config =
            CriClientConfig::new(place.endpoint().clone()).with_runtime_request_timeout(STEP);
        test(CriClient::new(&config).expect("CRI client")).await;
        // The server may have stopped already; the checks below say so.
        let _ = stop.send(());
        let served = tokio::time::timeout(STEP, server)
            .await
            .expect("the server stops on shutdown")
            .expect("the server task did not panic");
        assert!(served.is_ok(), "the server stopped cleanly: {served:?}");
    });
}

fn sandbox_config(name: &str) -> PodSandboxConfig {
    PodSandboxConfig {
        metadata: Some(PodSandboxMetadata {
            name: name.to_owned(),
            uid: format!("uid-{name}"),
            namespace: "default".to_owned(),
            attempt: 0,
        }),
        labels: HashMap::from([("app".to_owned(), name.to_owned())]),
        log_directory: log_directory(name),
        ..Default::default()
    }
}

fn log_directory(pod: &str) -> String {
    std::env::temp_dir()
        .join(format!("default_{pod}_uid-{pod}"))
        .display()
        .to_string()
}

fn container_config(name: &str, image: &str) -> ContainerConfig {
    ContainerConfig {
        metadata: Some(ContainerMetadata {
            name: name.to_owned(),
            attempt: 0,
        }),
        image: Some(ImageSpec {
            image: image.to_owned(),
            ..Default::default()
        }),
        log_path: format!("{name}.log"),
        ..Default::default()
    }
}

/// The request that pulls `image` by its name alone.
fn pull(image: &str) -> PullImageRequest {
    PullImageRequest {
        image: Some(image_named(image)),
        ..Default::default()
    }
}

/// The request that runs a sandbox of `pod` with `runtime_handler`.
fn run_sandbox(pod: &PodSandboxConfig, runtime_handler: &str) -> RunPodSandboxRequest {
    RunPodSandboxRequest {
        config: Some(pod.clone()),
        runtime_handler: runtime_handler.to_owned(),
    }
}

/// The request that creates `config` in `sandbox`, a sandbox of `pod`.
fn create(sandbox: &str, config: ContainerConfig, pod: PodSandboxConfig) -> CreateContainerRequest {
    CreateContainerRequest {
        pod_sandbox_id: sandbox.to_owned(),
        config: Some(config),
        sandbox_config: Some(pod),
    }
}

/// The request that starts container `id`.
fn start(id: &str) -> StartContainerRequest {
    StartContainerRequest {
        container_id: id.to_owned(),
    }
}

/// Pulls `img:1` and starts a container `c` of it in `sandbox`; returns its ID.
async fn started_container(cri: &CriClient, sandbox: &str, pod: PodSandboxConfig) -> String {
    cri.call(pull("img:1")).await.expect("pull");
    let id = cri
        .call(create(sandbox, container_config("c", "img:1"), pod))
        .await
        .expect("create")
        .container_id;
    cri.call(start(&id)).await.expect("start");
    id
}

#[test]
fn a_pod_lifecycle_makes_the_round_trip() {
    with_served_fake(FakeRuntime::new(), |cri| async move {
        let version = cri.call(VersionRequest::default()).await.expect("version");
        assert_eq!(version.runtime_name, "sergeant-fake");
        assert_eq!(version.runtime_api_version, "v1");

        let pod = sandbox_config("web");
        let sandbox = cri
            .call(run_sandbox(&pod, ""))
            .await
            .expect("run sandbox")
            .pod_sandbox_id;
        let status = cri
            .call(PodSandboxStatusRequest {
                pod_sandbox_id: sandbox.clone(),
                verbose: false,
            })
            .await
            .expect("sandbox status");
        let status = status.status.expect("a sandbox status");
        assert_eq!(
            status.metadata, pod.metadata,
            "the metadata comes back as sent"
        );
        assert_eq!(status.labels.get("app").map(String::as_str), Some("web"));

        let image = "mcr.microsoft.com/windows/nanoserver:ltsc2022";
        let image_ref = cri
            .call(PullImageRequest {
                sandbox_config: Some(pod.clone()),
                ..pull(image)
            })
            .await
            .expect("pull")
            .image_ref;
        assert!(!image_ref.is_empty(), "the pull names the image it stored");

        let created = cri
            .call(create(
                &sandbox,
                container_config("app", image),
                pod.clone(),
            ))
            .await
            .expect("create")
            .container_id;
        cri.call(start(&created)).await.expect("start");
        let running = cri
            .call(ListContainersRequest {
                filter: Some(ContainerFilter {
                    pod_sandbox_id: sandbox.clone(),
                    ..Default::default()
                }),
            })
            .await
            .expect("list")
            .containers;
        assert_eq!(running.len(), 1);
        assert_eq!(running[0].id, created);
        assert_eq!(running[0].state, ContainerState::ContainerRunning as i32);

        cri.call(StopContainerRequest {
            container_id: created.clone(),
            timeout: 0,
        })
        .await
        .expect("stop");
        let stopped = cri
            .call(ContainerStatusRequest {
                container_id: created.clone(),
                verbose: false,
            })
            .await
            .expect("status");
        let stopped = stopped.status.expect("a container status");
        assert_eq!(stopped.state, ContainerState::ContainerExited as i32);
        let log_path = Path::new(&log_directory("web")).join("app.log");
        assert_eq!(Path::new(&stopped.log_path), log_path);

        cri.call(RemoveContainerRequest {
            container_id: created,
        })
        .await
        .expect("remove");
        cri.call(StopPodSandboxRequest {
            pod_sandbox_id: sandbox.clone(),
        })
        .await
        .expect("stop sandbox");
        cri.call(RemovePodSandboxRequest {
            pod_sandbox_id: sandbox,
        })
        .await
        .expect("remove sandbox");
        let left = cri
            .call(ListPodSandboxRequest::default())
            .await
            .expect("list sandboxes")
            .items;
        assert!(left.is_empty(), "nothing is left: {left:?}");
    });
}

#[test]
fn error_kinds_survive_the_wire() {
    let runtime = FakeRuntime::new().fail_pulls_matching("registry.invalid/");
    with_served_fake(runtime, |cri| async move {
        let missing = cri
            .call(ContainerStatusRequest {
                container_id: "no-such-container".to_owned(),
                verbose: false,
            })
            .await;
        assert!(
            matches!(
                missing,
                Err(RuntimeError::NotFound {
                    operation: "container_status",
                    ..
                })
            ),
            "{missing:?}"
        );
        let pull = cri.call(pull("registry.invalid/app:1")).await;
        assert!(
            matches!(&pull, Err(RuntimeError::NotFound { message, .. }) if message.contains("registry.invalid/app:1")),
            "{pull:?}"
        );
        let pod = sandbox_config("twice");
        cri.call(run_sandbox(&pod, ""))
            .await
            .expect("first sandbox");
        let again = cri.call(run_sandbox(&pod, "")).await;
        assert!(
            matches!(again, Err(RuntimeError::AlreadyExists { .. })),
            "{again:?}"
        );
        let sandbox = cri
            .call(ListPodSandboxRequest::default())
            .await
            .expect("list")
            .items[0]
            .id
            .clone();
        let pod = sandbox_config("twice");
        let id = started_container(&cri, &sandbox, pod).await;
        let restart = cri.call(start(&id)).await;
        assert!(
            matches!(&restart, Err(RuntimeError::Other { code, .. }) if code == "FailedPrecondition"),
            "{restart:?}"
        );
    });
}

#[test]
fn container_events_stream_over_the_wire() {
    with_served_fake(FakeRuntime::new(), |cri| async move {
        let mut events = cri.call(GetEventsRequest {}).await.expect("subscribe");
        let pod = sandbox_config("evented");
        let sandbox = cri
            .call(run_sandbox(&pod, ""))
            .await
            .expect("sandbox")
            .pod_sandbox_id;
        let id = started_container(&cri, &sandbox, pod).await;
        let mut seen = Vec::new();
        while !seen
            .iter()
            .any(|(container, kind)| container == &id && *kind == 1)
        {
            let event = tokio::time::timeout(STEP, events.message())
                .await
                .expect("an event within the step")
                .expect("the stream is healthy")
                .expect("the stream is open");
            seen.push((event.container_id, event.container_event_type));
        }
        assert!(
            seen.iter()
                .any(|(container, kind)| container == &id && *kind == 0),
            "the container's creation came before its start: {seen:?}"
        );
    });
}

#[test]
fn a_recording_server_keeps_the_requests_that_shape_a_pod() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("requests.jsonl");
    let recorder = Recorder::append_to(&file).expect("open the record");
    with_recording_fake(FakeRuntime::new(), Some(recorder), |cri| async move {
        let pod = sandbox_config("recorded");
        let sandbox = cri
            .call(run_sandbox(&pod, "handler-a"))
            .await
            .expect("sandbox")
            .pod_sandbox_id;
        started_container(&cri, &sandbox, pod).await;
        cri.call(ListContainersRequest::default())
            .await
            .expect("list");
    });
    let record = std::fs::read_to_string(&file).expect("read the record");
    let lines: Vec<serde_json::Value> = record
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON value per line"))
        .collect();
    let methods: Vec<&str> = lines
        .iter()
        .map(|line| line["method"].as_str().expect("a method"))
        .collect();
    // Start and list calls are not recorded; the pull, the sandbox and the creation are.
    assert_eq!(methods, ["RunPodSandbox", "PullImage", "CreateContainer"]);
    let sandbox = &lines[0]["request"];
    assert_eq!(sandbox["runtime_handler"], "handler-a");
    assert_eq!(sandbox["config"]["metadata"]["name"], "recorded");
    assert_eq!(lines[1]["request"]["image"]["image"], "img:1");
    let container = &lines[2]["request"]["config"];
    assert_eq!(container["metadata"]["name"], "c");
    assert_eq!(container["log_path"], "c.log");
}

/// The CRI adapter sends the image spec it is given whole: the pod's annotations reach the
/// runtime with a pull and an image status, as upstream's kubelet sends them (the adapter
/// once sent the name alone).
#[test]
fn the_adapter_sends_the_image_spec_whole() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("requests.jsonl");
    let recorder = Recorder::append_to(&file).expect("open the record");
    let spec = ImageSpec {
        image: "img:1".to_owned(),
        annotations: HashMap::from([("kubernetes.io/config.source".to_owned(), "file".to_owned())]),
        ..Default::default()
    };
    let sent = spec.clone();
    with_recording_fake(FakeRuntime::new(), Some(recorder), |cri| async move {
        let adapter = CriAdapter::new(cri).start();
        let call = |request: RuntimeRequest| adapter.send(RuntimeCall(request));
        let pull = PullImageRequest {
            image: Some(sent.clone()),
            ..Default::default()
        };
        call(pull.into_request())
            .await
            .expect("the adapter is alive")
            .expect("pulled");
        let status = ImageStatusRequest {
            image: Some(sent),
            verbose: false,
        };
        let answer = call(status.into_request())
            .await
            .expect("the adapter is alive")
            .expect("an image status");
        let found = ImageStatusRequest::from_response(answer).expect("an image status answer");
        assert!(found.image.is_some(), "the pulled image is there");
    });
    let record = std::fs::read_to_string(&file).expect("read the record");
    let pulled: serde_json::Value =
        serde_json::from_str(record.lines().next().expect("one request")).expect("JSON");
    assert_eq!(pulled["method"], "PullImage");
    assert_eq!(
        pulled["request"]["image"]["annotations"],
        serde_json::json!({"kubernetes.io/config.source": "file"})
    );
}
