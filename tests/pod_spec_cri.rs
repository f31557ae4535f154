//! The pod spec translation against the real containerd of the node env: a Burstable pod with
//! an emptyDir, `$(VAR)` expansion and cpu/memory limits runs in its pod cgroup, writes into
//! its volume, carries sergeant's labels and annotations, and gets the memory limit it asked
//! for. `SERGEANT_CRI_ENDPOINT` names the runtime socket (`tests/run.sh` sets it).

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::FutureExt;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use sergeant_config::Endpoint;
use sergeant_config::{FlagOverrides, NodeConfig};
use sergeant_core::hash::container_hash;
use sergeant_core::kind::ContainerKind;
use sergeant_core::labels;
use sergeant_core::spec::{
    container_config, pod_cgroup_parent, qos_class, sandbox_config, ImageUser, NodeContext,
    NodeImage, PodObjects, QosClass,
};
use sergeant_core::volumes::VolumePlan;
use sergeant_host::cgroup::{ensure_pod_cgroup, remove_pod_cgroup};
use sergeant_host::pod_files::{prepare_container_log_dir, prepare_termination_log};
use sergeant_host::volumes::{setup_volumes, teardown_pod_dir};
use sergeant_messages::pods::core::{
    Container, EmptyDirVolumeSource, EnvVar, Pod, PodSpec, ResourceRequirements, Volume,
    VolumeMount,
};
use sergeant_runtime_adapters::cri::api::{
    ContainerState, ContainerStatusRequest, CreateContainerRequest, PullImageRequest,
    RemoveContainerRequest, RemovePodSandboxRequest, RunPodSandboxRequest, StartContainerRequest,
    StopContainerRequest, StopPodSandboxRequest,
};
use sergeant_runtime_adapters::cri::{image_named, CriClient, CriClientConfig};

const ENDPOINT_VAR: &str = "SERGEANT_CRI_ENDPOINT";
const SHELL_IMAGE: &str = "127.0.0.1:5000/sergeant/shell:1.0";
const NAMESPACE: &str = "sergeant-spec-test";
const MEMORY_LIMIT: u64 = 64 << 20;

fn client() -> CriClient {
    let raw = std::env::var(ENDPOINT_VAR).unwrap_or_else(|_| {
        panic!(
            "{ENDPOINT_VAR} is not set: this test needs the real containerd of the node env. Run \
             `bash deploy/node-env/node-env.sh up` and export \
             {ENDPOINT_VAR}=unix:///run/sergeant-node/main/containerd.sock"
        )
    });
    let endpoint = Endpoint::parse(&raw).unwrap_or_else(|e| panic!("{ENDPOINT_VAR}={raw:?}: {e}"));
    let config =
        CriClientConfig::new(endpoint).with_runtime_request_timeout(Duration::from_secs(60));
    CriClient::new(&config).expect("CRI client")
}

fn unique() -> String {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() % 1_000_000_000)
        .unwrap_or(0);
    format!("{}-{millis}", std::process::id())
}

fn node(root: &Path) -> NodeContext {
    let text = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";
    let flags = FlagOverrides {
        hostname_override: Some("spec-test-node".into()),
        root_dir: Some(root.join("kubelet")),
        ..Default::default()
    };
    let config = NodeConfig::parse(text, "test", &flags).expect("config");
    let mut node = sergeant_host::node::node_context(&config).expect("node context");
    node.pod_log_root = root.join("logs");
    node
}

fn test_pod(id: &str) -> Pod {
    let quantities = |pairs: &[(&str, &str)]| -> BTreeMap<String, Quantity> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Quantity(v.to_string())))
            .collect()
    };
    let env = |name: &str, value: &str| EnvVar {
        name: name.into(),
        value: Some(value.into()),
        value_from: None,
    };
    Pod {
        metadata: ObjectMeta {
            name: Some(format!("spec-{id}")),
            namespace: Some(NAMESPACE.into()),
            uid: Some(format!("uid-{id}")),
            labels: Some([("app".to_string(), "spec-test".to_string())].into()),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "app".into(),
                image: Some(SHELL_IMAGE.into()),
                command: Some(vec![
                    "sh".into(),
                    "-c".into(),
                    "echo $GREETING from $(WHO) > /data/out; sleep 3600".into(),
                ]),
                env: Some(vec![
                    env("WHO", "sergeant"),
                    env("GREETING", "hello $(WHO)"),
                ]),
                resources: Some(ResourceRequirements {
                    requests: Some(quantities(&[("cpu", "100m")])),
                    limits: Some(quantities(&[("cpu", "200m"), ("memory", "64Mi")])),
                    ..Default::default()
                }),
                volume_mounts: Some(vec![VolumeMount {
                    name: "data".into(),
                    mount_path: "/data".into(),
                    ..Default::default()
                }]),
                ..Default::default()
            }],
            volumes: Some(vec![Volume {
                name: "data".into(),
                empty_dir: Some(EmptyDirVolumeSource::default()),
                ..Default::default()
            }]),
            termination_grace_period_seconds: Some(2),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The runtime objects a run created, removed whatever happened.
#[derive(Default)]
struct Created {
    sandbox: Option<String>,
    container: Option<String>,
}

async fn cleanup(
    client: &CriClient,
    created: &Created,
    pod: &Pod,
    node: &NodeContext,
    cgroup: &str,
) {
    if let Some(id) = &created.container {
        let stop = StopContainerRequest {
            container_id: id.clone(),
            timeout: 0,
        };
        let _ = client.call(stop).await;
        let remove = RemoveContainerRequest {
            container_id: id.clone(),
        };
        let _ = client.call(remove).await;
    }
    if let Some(id) = &created.sandbox {
        let stop = StopPodSandboxRequest {
            pod_sandbox_id: id.clone(),
        };
        let _ = client.call(stop).await;
        let remove = RemovePodSandboxRequest {
            pod_sandbox_id: id.clone(),
        };
        client.call(remove).await.expect("remove sandbox");
    }
    let uid = pod.metadata.uid.as_deref().unwrap_or_default();
    teardown_pod_dir(uid, node).expect("teardown pod dir");
    remove_pod_cgroup(cgroup).expect("remove pod cgroup");
}

async fn wait_for_file(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            if !text.is_empty() {
                return text;
            }
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The cgroup directory of `container_id` below `parent` in one hierarchy.
fn container_cgroup(hierarchy: &str, parent: &str, container_id: &str) -> PathBuf {
    let dir = Path::new("/sys/fs/cgroup")
        .join(hierarchy)
        .join(parent.trim_start_matches('/'));
    let found = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .is_some_and(|n| n.to_string_lossy().contains(container_id))
        });
    found.unwrap_or_else(|| panic!("no cgroup of {container_id} under {}", dir.display()))
}

fn read_number(path: &Path) -> u64 {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.trim()
        .parse()
        .unwrap_or_else(|e| panic!("{}: {text:?}: {e}", path.display()))
}

#[tokio::test]
async fn a_translated_pod_runs_on_containerd_with_its_volume_env_labels_and_limits() {
    let client = client();
    let id = unique();
    let root = tempfile::tempdir().expect("tempdir");
    let node = node(root.path());
    let pod = test_pod(&id);
    assert_eq!(qos_class(&pod), QosClass::Burstable);
    let cgroup = pod_cgroup_parent(&pod, &node);
    assert_eq!(cgroup, format!("/kubepods/burstable/poduid-{id}"));
    let mut created = Created::default();

    let outcome = AssertUnwindSafe(async {
        ensure_pod_cgroup(&cgroup, node.pod_pids_limit).expect("pod cgroup");
        let plan = VolumePlan::for_pod(&pod, &node).expect("volume plan");
        setup_volumes(&plan, &BTreeMap::new()).expect("volumes");
        let resolv_conf = sergeant_host::dns::read_resolv_conf(&node);
        let sandbox =
            sandbox_config(&pod, &node, 0, resolv_conf.as_deref()).expect("sandbox config");
        let sandbox_id = client
            .call(RunPodSandboxRequest {
                config: Some(sandbox.clone()),
                runtime_handler: String::new(),
            })
            .await
            .expect("run sandbox")
            .pod_sandbox_id;
        created.sandbox = Some(sandbox_id.clone());

        let spec_container = &pod.spec.as_ref().expect("spec").containers[0];
        let image_id = client
            .call(PullImageRequest {
                image: Some(image_named(SHELL_IMAGE)),
                auth: None,
                sandbox_config: Some(sandbox.clone()),
            })
            .await
            .expect("pull")
            .image_ref;
        prepare_container_log_dir(&pod, &spec_container.name, &node).expect("log dir");
        let termination_log = prepare_termination_log(&pod, spec_container, 0, &node)
            .expect("termination log")
            .expect("a termination message path");
        let config = container_config(
            &pod,
            spec_container,
            ContainerKind::Regular,
            0,
            &node,
            &plan,
            None,
            &PodObjects::default(),
            &NodeImage {
                id: image_id.clone(),
                user: ImageUser::Uid(0),
            },
        )
        .expect("container config")
        .config;
        // Created from the image's ID, as upstream's kubelet creates it: containerd takes it.
        assert!(image_id.starts_with("sha256:"), "{image_id}");
        let container_id = client
            .call(CreateContainerRequest {
                pod_sandbox_id: sandbox_id.clone(),
                config: Some(config),
                sandbox_config: Some(sandbox.clone()),
            })
            .await
            .expect("create container")
            .container_id;
        created.container = Some(container_id.clone());
        client
            .call(StartContainerRequest {
                container_id: container_id.clone(),
            })
            .await
            .expect("start container");

        // The env chain and the command's $(WHO) were expanded before the shell saw them.
        let out = plan.get("data").expect("data volume").host_path.join("out");
        assert_eq!(
            wait_for_file(&out).await.trim(),
            "hello sergeant from sergeant"
        );
        assert!(termination_log.is_file());

        let status = client
            .call(ContainerStatusRequest {
                container_id: container_id.clone(),
                verbose: false,
            })
            .await
            .expect("container status")
            .status
            .expect("status present");
        assert_eq!(status.state, ContainerState::ContainerRunning as i32);
        let pod_name = pod.metadata.name.clone().unwrap_or_default();
        assert_eq!(status.labels[labels::POD_NAME], pod_name);
        assert_eq!(status.labels[labels::POD_NAMESPACE], NAMESPACE);
        assert_eq!(status.labels[labels::POD_UID], format!("uid-{id}"));
        assert_eq!(status.labels[labels::CONTAINER_NAME], "app");
        assert!(status.labels.contains_key(labels::NODE));
        assert_eq!(
            status.annotations[labels::CONTAINER_HASH],
            container_hash(spec_container)
        );
        assert_eq!(status.annotations[labels::CONTAINER_RESTART_COUNT], "0");
        assert_eq!(status.annotations[labels::CONTAINER_KIND], "regular");
        assert_eq!(
            status.annotations[labels::POD_TERMINATION_GRACE_PERIOD],
            "2"
        );
        assert_eq!(
            status.annotations[labels::TERMINATION_MESSAGE_PATH],
            "/dev/termination-log"
        );
        assert!(
            status.log_path.ends_with("/app/0.log"),
            "{}",
            status.log_path
        );

        let memory = container_cgroup("memory", &cgroup, &container_id);
        assert_eq!(
            read_number(&memory.join("memory.limit_in_bytes")),
            MEMORY_LIMIT
        );
        let cpu = container_cgroup("cpu", &cgroup, &container_id);
        assert_eq!(read_number(&cpu.join("cpu.shares")), 102);
        assert_eq!(read_number(&cpu.join("cpu.cfs_quota_us")), 20_000);
        assert_eq!(read_number(&cpu.join("cpu.cfs_period_us")), 100_000);
    })
    .catch_unwind()
    .await;
    cleanup(&client, &created, &pod, &node, &cgroup).await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
    assert!(!node
        .root_dir
        .join("pods")
        .join(format!("uid-{id}"))
        .exists());
    assert!(!Path::new("/sys/fs/cgroup/memory")
        .join(cgroup.trim_start_matches('/'))
        .exists());
}
