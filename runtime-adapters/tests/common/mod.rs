//! Shared helpers of the CRI client tests: the endpoint under test, unique names, pod and
//! container configs, waiting with deadlines, and cleanup of everything a test created.
//!
//! The tests talk to the real private containerd started by `deploy/node-env/node-env.sh up`;
//! `SERGEANT_CRI_ENDPOINT` names its socket.

#![allow(dead_code)] // each test binary uses its own subset

use std::collections::HashMap;
use std::future::Future;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sergeant_config::Endpoint;
use sergeant_runtime_adapters::cri::api::{
    ContainerConfig, ContainerMetadata, ImageSpec, KeyValue, LinuxPodSandboxConfig,
    ListPodSandboxRequest, PodSandboxConfig, PodSandboxFilter, PodSandboxMetadata,
    PullImageRequest, RemovePodSandboxRequest, RunPodSandboxRequest, StopPodSandboxRequest,
};
use sergeant_runtime_adapters::cri::{image_named, CriClient, CriClientConfig};

/// The variable naming the runtime endpoint under test.
pub const ENDPOINT_VAR: &str = "SERGEANT_CRI_ENDPOINT";
/// The busybox image (Cmd /bin/sh).
pub const SHELL_IMAGE: &str = "127.0.0.1:5000/sergeant/shell:1.0";
/// The image that exits with $EXIT_CODE.
pub const EXIT_IMAGE: &str = "127.0.0.1:5000/sergeant/exit:1.0";
/// An image the local registry does not have.
pub const MISSING_IMAGE: &str = "127.0.0.1:5000/sergeant/nope:1.0";
/// The label every object a test creates carries, valued with the test's unique id.
pub const TEST_LABEL: &str = "sergeant.test/id";
/// Namespace of the test pods.
pub const TEST_NAMESPACE: &str = "sergeant-cri-test";

/// The runtime endpoint under test. Fails the test (does not skip it) when it is not set.
pub fn endpoint() -> Endpoint {
    let raw = std::env::var(ENDPOINT_VAR).unwrap_or_else(|_| {
        panic!(
            "{ENDPOINT_VAR} is not set: these tests need the real containerd of the node env. \
             Run `bash deploy/node-env/node-env.sh up` and export \
             {ENDPOINT_VAR}=unix:///run/sergeant-node/main/containerd.sock (tests/run.sh does both)"
        )
    });
    Endpoint::parse(&raw).unwrap_or_else(|e| panic!("{ENDPOINT_VAR}={raw:?} is invalid: {e}"))
}

/// A client of the runtime under test, with a short request timeout so a hung test fails fast.
pub fn client() -> CriClient {
    let config =
        CriClientConfig::new(endpoint()).with_runtime_request_timeout(Duration::from_secs(60));
    CriClient::new(&config).expect("CRI client")
}

/// A name unique across parallel tests and runs: `PREFIX-PID-MILLIS-N`.
pub fn unique(prefix: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() % 1_000_000_000)
        .unwrap_or(0);
    format!(
        "{prefix}-{}-{millis}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The label selector of one test's objects.
pub fn labels_of(test_id: &str) -> HashMap<String, String> {
    HashMap::from([(TEST_LABEL.to_string(), test_id.to_string())])
}

/// A pod sandbox config with a unique name and uid, the test's label, no cgroup parent, and
/// its log directory under `log_dir`.
pub fn sandbox_config(test_id: &str, name: &str, log_dir: &Path) -> PodSandboxConfig {
    let uid = unique("uid");
    PodSandboxConfig {
        metadata: Some(PodSandboxMetadata {
            name: name.to_string(),
            uid,
            namespace: TEST_NAMESPACE.to_string(),
            attempt: 0,
        }),
        hostname: name.chars().take(63).collect(),
        log_directory: log_dir.display().to_string(),
        labels: labels_of(test_id),
        linux: Some(LinuxPodSandboxConfig {
            cgroup_parent: String::new(),
            ..LinuxPodSandboxConfig::default()
        }),
        ..PodSandboxConfig::default()
    }
}

/// A container config running `command` (empty: the image's own) with `env`, labelled for
/// the test, logging to `NAME.log` in the sandbox log directory.
pub fn container_config(
    test_id: &str,
    name: &str,
    image: &str,
    command: &[&str],
    env: &[(&str, &str)],
) -> ContainerConfig {
    ContainerConfig {
        metadata: Some(ContainerMetadata {
            name: name.to_string(),
            attempt: 0,
        }),
        image: Some(ImageSpec {
            image: image.to_string(),
            ..ImageSpec::default()
        }),
        command: command.iter().map(|s| s.to_string()).collect(),
        envs: env
            .iter()
            .map(|(k, v)| KeyValue {
                key: k.to_string(),
                value: v.to_string(),
            })
            .collect(),
        labels: labels_of(test_id),
        log_path: format!("{name}.log"),
        ..ContainerConfig::default()
    }
}

/// Polls `check` until it yields `Some`, failing the test with `what` after `timeout`.
pub async fn wait_for<T, F, Fut>(timeout: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(10);
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(200));
    }
}

/// Stops and removes every sandbox labelled with `test_id` (and so their containers).
pub async fn remove_test_sandboxes(client: &CriClient, test_id: &str) {
    let filter = PodSandboxFilter {
        label_selector: labels_of(test_id),
        ..PodSandboxFilter::default()
    };
    let sandboxes = client
        .call(ListPodSandboxRequest {
            filter: Some(filter),
        })
        .await
        .expect("list sandboxes for cleanup")
        .items;
    for sandbox in sandboxes {
        client
            .call(StopPodSandboxRequest {
                pod_sandbox_id: sandbox.id.clone(),
            })
            .await
            .expect("stop sandbox");
        client
            .call(RemovePodSandboxRequest {
                pod_sandbox_id: sandbox.id,
            })
            .await
            .expect("remove sandbox");
    }
}

/// Asserts that nothing labelled with `test_id` is left in the runtime.
pub async fn assert_nothing_left(client: &CriClient, test_id: &str) {
    let filter = PodSandboxFilter {
        label_selector: labels_of(test_id),
        ..PodSandboxFilter::default()
    };
    let left = client
        .call(ListPodSandboxRequest {
            filter: Some(filter),
        })
        .await
        .expect("list sandboxes")
        .items;
    assert!(left.is_empty(), "test {test_id} leaked sandboxes: {left:?}");
}

/// Removes the test's sandboxes when dropped, so a failing test leaks nothing either. The
/// happy path cleans up (and asserts) explicitly; this is the safety net for panics.
pub struct CleanupGuard {
    test_id: String,
}

impl CleanupGuard {
    /// A guard for the objects labelled with `test_id`.
    pub fn new(test_id: &str) -> Self {
        Self {
            test_id: test_id.to_string(),
        }
    }
}

impl Drop for CleanupGuard {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        let test_id = self.test_id.clone();
        // A fresh runtime on its own thread: the test's runtime may be the one unwinding.
        let cleaner = std::thread::spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            runtime.block_on(async {
                let client = client();
                remove_test_sandboxes(&client, &test_id).await;
            });
        });
        let _ = cleaner.join();
    }
}

/// Makes sure `image` is present (pulled through CRI from the local registry).
pub async fn ensure_image(client: &CriClient, image: &str) {
    client
        .call(PullImageRequest {
            image: Some(image_named(image)),
            ..PullImageRequest::default()
        })
        .await
        .unwrap_or_else(|e| panic!("pull {image}: {e}"));
}

/// A running sandbox of one test, with what the test needs around it: the client, the test's
/// id (its label), the guard that cleans up if the test panics, and the sandbox's log dir.
pub struct TestSandbox {
    pub client: CriClient,
    pub test_id: String,
    pub guard: CleanupGuard,
    pub logs: tempfile::TempDir,
    pub config: PodSandboxConfig,
    pub id: String,
}

/// Pulls `image` and runs a sandbox labelled with a fresh test id made from `prefix`.
pub async fn test_sandbox(prefix: &str, image: &str) -> TestSandbox {
    let client = client();
    let test_id = unique(prefix);
    let guard = CleanupGuard::new(&test_id);
    let logs = tempfile::tempdir().expect("tempdir");
    ensure_image(&client, image).await;
    let config = sandbox_config(&test_id, &test_id, logs.path());
    let id = client
        .call(RunPodSandboxRequest {
            config: Some(config.clone()),
            runtime_handler: String::new(),
        })
        .await
        .expect("run sandbox")
        .pod_sandbox_id;
    TestSandbox {
        client,
        test_id,
        guard,
        logs,
        config,
        id,
    }
}
