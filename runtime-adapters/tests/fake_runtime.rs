//! The fake runtime as the kubelet sees it: a runtime-adapter actor answering CRI calls over
//! the runtime port, with containerd's semantics and nothing running behind it.

mod fake_common;

use fake_common::call;

use std::collections::{HashMap, HashSet};

use actix::{Actor, Addr};
use sergeant_messages::runtime::cri;
use sergeant_messages::runtime_error::RuntimeError;
use sergeant_runtime_adapters::fake::{FakeAdapter, FakeRuntime};

/// Runs `test` against a fresh fake adapter serving `runtime`, in its own actix system.
fn with_node<F>(runtime: FakeRuntime, test: impl FnOnce(Addr<FakeAdapter>) -> F)
where
    F: std::future::Future<Output = ()>,
{
    actix_rt::System::new().block_on(async move { test(FakeAdapter::new(runtime).start()).await });
}

fn labels(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn pod_config(name: &str, attempt: u32) -> cri::PodSandboxConfig {
    cri::PodSandboxConfig {
        metadata: Some(cri::PodSandboxMetadata {
            name: name.to_string(),
            uid: format!("uid-{name}"),
            namespace: "default".to_string(),
            attempt,
        }),
        log_directory: format!("/var/log/pods/default_{name}"),
        labels: labels(&[("app", name), ("tier", "web")]),
        annotations: labels(&[("note", "hollow")]),
        ..Default::default()
    }
}

fn container_config(name: &str, image: &str) -> cri::ContainerConfig {
    cri::ContainerConfig {
        metadata: Some(cri::ContainerMetadata {
            name: name.to_string(),
            attempt: 0,
        }),
        image: Some(cri::ImageSpec {
            image: image.to_string(),
            ..Default::default()
        }),
        log_path: format!("{name}/0.log"),
        labels: labels(&[("container", name)]),
        ..Default::default()
    }
}

fn image(reference: &str) -> Option<cri::ImageSpec> {
    Some(cri::ImageSpec {
        image: reference.to_string(),
        ..Default::default()
    })
}

async fn run_pod(node: &Addr<FakeAdapter>, name: &str) -> String {
    let request = cri::RunPodSandboxRequest {
        config: Some(pod_config(name, 0)),
        ..Default::default()
    };
    call(node, request)
        .await
        .expect("run sandbox")
        .pod_sandbox_id
}

async fn pull(node: &Addr<FakeAdapter>, reference: &str) -> Result<String, RuntimeError> {
    let request = cri::PullImageRequest {
        image: image(reference),
        ..Default::default()
    };
    call(node, request).await.map(|answer| answer.image_ref)
}

async fn create(
    node: &Addr<FakeAdapter>,
    sandbox: &str,
    name: &str,
    image: &str,
) -> Result<String, RuntimeError> {
    let request = cri::CreateContainerRequest {
        pod_sandbox_id: sandbox.to_string(),
        config: Some(container_config(name, image)),
        sandbox_config: Some(pod_config("ignored", 0)),
    };
    call(node, request).await.map(|answer| answer.container_id)
}

async fn start(node: &Addr<FakeAdapter>, id: &str) -> Result<(), RuntimeError> {
    let request = cri::StartContainerRequest {
        container_id: id.to_string(),
    };
    call(node, request).await.map(drop)
}

async fn stop(node: &Addr<FakeAdapter>, id: &str, timeout: i64) -> Result<(), RuntimeError> {
    let request = cri::StopContainerRequest {
        container_id: id.to_string(),
        timeout,
    };
    call(node, request).await.map(drop)
}

async fn container_status(
    node: &Addr<FakeAdapter>,
    id: &str,
) -> Result<cri::ContainerStatus, RuntimeError> {
    let request = cri::ContainerStatusRequest {
        container_id: id.to_string(),
        verbose: false,
    };
    let answer = call(node, request).await?;
    Ok(answer.status.expect("a status"))
}

async fn sandbox_status(
    node: &Addr<FakeAdapter>,
    id: &str,
) -> Result<cri::PodSandboxStatus, RuntimeError> {
    let request = cri::PodSandboxStatusRequest {
        pod_sandbox_id: id.to_string(),
        verbose: false,
    };
    let answer = call(node, request).await?;
    Ok(answer.status.expect("a status"))
}

async fn sandbox_ip(node: &Addr<FakeAdapter>, id: &str) -> String {
    let status = sandbox_status(node, id).await.expect("sandbox status");
    status.network.expect("network status").ip
}

async fn list_sandboxes(node: &Addr<FakeAdapter>, filter: cri::PodSandboxFilter) -> Vec<String> {
    let request = cri::ListPodSandboxRequest {
        filter: Some(filter),
    };
    let answer = call(node, request).await.expect("list sandboxes");
    answer.items.into_iter().map(|item| item.id).collect()
}

async fn list_containers(node: &Addr<FakeAdapter>, filter: cri::ContainerFilter) -> Vec<String> {
    let request = cri::ListContainersRequest {
        filter: Some(filter),
    };
    let answer = call(node, request).await.expect("list containers");
    answer.containers.into_iter().map(|item| item.id).collect()
}

fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids
}

fn is_hex_id(id: &str) -> bool {
    id.len() == 64
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[test]
fn a_pod_runs_through_its_whole_lifecycle_and_leaves_nothing_behind() {
    with_node(FakeRuntime::new(), |node| async move {
        let sandbox = run_pod(&node, "web").await;
        assert!(is_hex_id(&sandbox), "{sandbox}");
        let image_ref = pull(&node, "nginx:1.27").await.expect("pull");
        assert!(
            image_ref.starts_with("sha256:") && is_hex_id(&image_ref["sha256:".len()..]),
            "{image_ref}"
        );

        let container = create(&node, &sandbox, "nginx", "nginx:1.27")
            .await
            .expect("create");
        assert!(is_hex_id(&container) && container != sandbox, "{container}");
        let created = container_status(&node, &container).await.expect("status");
        assert_eq!(created.state, cri::ContainerState::ContainerCreated as i32);
        assert!(created.created_at > 0 && created.started_at == 0);

        start(&node, &container).await.expect("start");
        let running = container_status(&node, &container).await.expect("status");
        assert_eq!(running.state, cri::ContainerState::ContainerRunning as i32);
        assert!(running.started_at > running.created_at);
        assert_eq!(
            running.metadata.as_ref().map(|m| m.name.as_str()),
            Some("nginx")
        );
        assert_eq!(
            running.image.as_ref().map(|i| i.image.as_str()),
            Some("docker.io/library/nginx:1.27")
        );
        assert_eq!(running.image_id, image_ref);
        assert!(
            running
                .image_ref
                .starts_with("docker.io/library/nginx@sha256:"),
            "{}",
            running.image_ref
        );
        assert_eq!(
            running.log_path,
            "/var/log/pods/default_ignored/nginx/0.log"
        );
        assert_eq!(
            running.labels.get("container").map(String::as_str),
            Some("nginx")
        );

        stop(&node, &container, 30).await.expect("stop");
        let exited = container_status(&node, &container).await.expect("status");
        assert_eq!(exited.state, cri::ContainerState::ContainerExited as i32);
        assert_eq!((exited.exit_code, exited.reason.as_str()), (0, "Completed"));
        assert!(exited.finished_at > exited.started_at);
        assert_eq!(exited.started_at, running.started_at);

        let removed = cri::RemoveContainerRequest {
            container_id: container.clone(),
        };
        call(&node, removed).await.expect("remove container");
        assert!(list_containers(&node, cri::ContainerFilter::default())
            .await
            .is_empty());

        let ready = sandbox_status(&node, &sandbox)
            .await
            .expect("sandbox status");
        assert_eq!(ready.state, cri::PodSandboxState::SandboxReady as i32);
        assert!(ready
            .network
            .as_ref()
            .is_some_and(|n| n.ip.starts_with("10.244.")));
        assert_eq!(ready.labels.get("app").map(String::as_str), Some("web"));
        let stop_sandbox = cri::StopPodSandboxRequest {
            pod_sandbox_id: sandbox.clone(),
        };
        call(&node, stop_sandbox).await.expect("stop sandbox");
        let stopped = sandbox_status(&node, &sandbox)
            .await
            .expect("sandbox status");
        assert_eq!(stopped.state, cri::PodSandboxState::SandboxNotready as i32);
        let remove_sandbox = cri::RemovePodSandboxRequest {
            pod_sandbox_id: sandbox.clone(),
        };
        call(&node, remove_sandbox).await.expect("remove sandbox");

        assert!(list_sandboxes(&node, cri::PodSandboxFilter::default())
            .await
            .is_empty());
        assert!(list_containers(&node, cri::ContainerFilter::default())
            .await
            .is_empty());
        let gone = sandbox_status(&node, &sandbox).await.expect_err("removed");
        assert!(
            matches!(
                gone,
                RuntimeError::NotFound {
                    operation: "podsandbox_status",
                    ..
                }
            ),
            "{gone}"
        );
    });
}

#[test]
fn lists_honour_id_state_sandbox_and_label_filters() {
    with_node(FakeRuntime::new(), |node| async move {
        pull(&node, "busybox").await.expect("pull");
        let web = run_pod(&node, "web").await;
        let db = run_pod(&node, "db").await;
        let web_app = create(&node, &web, "app", "busybox").await.expect("create");
        let web_log = create(&node, &web, "log", "busybox").await.expect("create");
        let db_app = create(&node, &db, "app", "busybox").await.expect("create");
        start(&node, &web_app).await.expect("start");
        start(&node, &db_app).await.expect("start");
        call(
            &node,
            cri::StopPodSandboxRequest {
                pod_sandbox_id: db.clone(),
            },
        )
        .await
        .expect("stop");

        let by_label = |pairs: &[(&str, &str)]| cri::PodSandboxFilter {
            label_selector: labels(pairs),
            ..Default::default()
        };
        assert_eq!(
            list_sandboxes(&node, by_label(&[("app", "web")])).await,
            vec![web.clone()]
        );
        assert_eq!(
            sorted(list_sandboxes(&node, by_label(&[("tier", "web")])).await),
            sorted(vec![web.clone(), db.clone()])
        );
        assert!(
            list_sandboxes(&node, by_label(&[("app", "web"), ("tier", "db")]))
                .await
                .is_empty(),
            "every label must match"
        );
        let ready = cri::PodSandboxFilter {
            state: Some(cri::PodSandboxStateValue {
                state: cri::PodSandboxState::SandboxReady as i32,
            }),
            ..Default::default()
        };
        assert_eq!(list_sandboxes(&node, ready).await, vec![web.clone()]);
        let by_id = cri::PodSandboxFilter {
            id: db.clone(),
            ..Default::default()
        };
        assert_eq!(list_sandboxes(&node, by_id).await, vec![db.clone()]);

        let in_state = |state: cri::ContainerState| cri::ContainerFilter {
            state: Some(cri::ContainerStateValue {
                state: state as i32,
            }),
            ..Default::default()
        };
        assert_eq!(
            list_containers(&node, in_state(cri::ContainerState::ContainerRunning)).await,
            vec![web_app.clone()]
        );
        assert_eq!(
            list_containers(&node, in_state(cri::ContainerState::ContainerCreated)).await,
            vec![web_log.clone()]
        );
        assert_eq!(
            list_containers(&node, in_state(cri::ContainerState::ContainerExited)).await,
            vec![db_app.clone()]
        );
        let in_web = cri::ContainerFilter {
            pod_sandbox_id: web.clone(),
            ..Default::default()
        };
        assert_eq!(
            sorted(list_containers(&node, in_web).await),
            sorted(vec![web_app.clone(), web_log.clone()])
        );
        let apps = cri::ContainerFilter {
            label_selector: labels(&[("container", "app")]),
            ..Default::default()
        };
        assert_eq!(
            sorted(list_containers(&node, apps).await),
            sorted(vec![web_app.clone(), db_app.clone()])
        );
        let web_apps = cri::ContainerFilter {
            pod_sandbox_id: web.clone(),
            label_selector: labels(&[("container", "app")]),
            ..Default::default()
        };
        assert_eq!(
            list_containers(&node, web_apps).await,
            vec![web_app.clone()]
        );
        let by_id = cri::ContainerFilter {
            id: web_log.clone(),
            ..Default::default()
        };
        assert_eq!(list_containers(&node, by_id).await, vec![web_log]);
        let unknown = cri::ContainerFilter {
            id: "0".repeat(64),
            ..Default::default()
        };
        assert!(list_containers(&node, unknown).await.is_empty());
    });
}

#[test]
fn unknown_objects_are_not_found_and_the_error_names_the_operation() {
    with_node(FakeRuntime::new(), |node| async move {
        pull(&node, "busybox").await.expect("pull");
        let missing = "f".repeat(64);
        let err = create(&node, &missing, "app", "busybox")
            .await
            .expect_err("no such sandbox");
        assert!(
            matches!(&err, RuntimeError::NotFound { operation: "create_container", message } if message.contains(&missing)),
            "{err}"
        );
        let err = start(&node, &missing).await.expect_err("no such container");
        assert!(
            matches!(
                err,
                RuntimeError::NotFound {
                    operation: "start_container",
                    ..
                }
            ),
            "{err}"
        );
        let err = stop(&node, &missing, 10)
            .await
            .expect_err("no such container");
        assert!(
            matches!(
                err,
                RuntimeError::NotFound {
                    operation: "stop_container",
                    ..
                }
            ),
            "{err}"
        );
        let err = container_status(&node, &missing)
            .await
            .expect_err("no such container");
        assert!(
            matches!(
                err,
                RuntimeError::NotFound {
                    operation: "container_status",
                    ..
                }
            ),
            "{err}"
        );
        let exec = cri::ExecSyncRequest {
            container_id: missing.clone(),
            cmd: vec!["true".into()],
            timeout: 1,
        };
        let err = call(&node, exec).await.expect_err("no such container");
        assert!(
            matches!(
                err,
                RuntimeError::NotFound {
                    operation: "exec_sync",
                    ..
                }
            ),
            "{err}"
        );
        let err = call(
            &node,
            cri::StopPodSandboxRequest {
                pod_sandbox_id: missing.clone(),
            },
        )
        .await
        .expect_err("no such sandbox");
        assert!(
            matches!(
                err,
                RuntimeError::NotFound {
                    operation: "stop_podsandbox",
                    ..
                }
            ),
            "{err}"
        );
        let err = sandbox_status(&node, &missing)
            .await
            .expect_err("no such sandbox");
        assert!(
            matches!(
                err,
                RuntimeError::NotFound {
                    operation: "podsandbox_status",
                    ..
                }
            ),
            "{err}"
        );

        let sandbox = run_pod(&node, "web").await;
        let err = create(&node, &sandbox, "app", "never-pulled:1")
            .await
            .expect_err("image not pulled");
        assert!(
            matches!(&err, RuntimeError::NotFound { operation: "create_container", message } if message.contains("never-pulled:1")),
            "{err}"
        );
    });
}

#[test]
fn reused_names_already_exist_within_their_scope_only() {
    with_node(FakeRuntime::new(), |node| async move {
        pull(&node, "busybox").await.expect("pull");
        let web = run_pod(&node, "web").await;
        let again = cri::RunPodSandboxRequest {
            config: Some(pod_config("web", 0)),
            ..Default::default()
        };
        let err = call(&node, again).await.expect_err("same name and attempt");
        assert!(
            matches!(&err, RuntimeError::AlreadyExists { operation: "run_podsandbox", message } if message.contains("web")),
            "{err}"
        );
        let next_attempt = cri::RunPodSandboxRequest {
            config: Some(pod_config("web", 1)),
            ..Default::default()
        };
        call(&node, next_attempt)
            .await
            .expect("a new attempt is a new name");

        create(&node, &web, "app", "busybox").await.expect("create");
        let err = create(&node, &web, "app", "busybox")
            .await
            .expect_err("same container name in the pod");
        assert!(
            matches!(&err, RuntimeError::AlreadyExists { operation: "create_container", message } if message.contains("app")),
            "{err}"
        );
        let other = run_pod(&node, "db").await;
        create(&node, &other, "app", "busybox")
            .await
            .expect("same name in another pod");
    });
}

#[test]
fn removes_of_unknown_objects_succeed() {
    with_node(FakeRuntime::new(), |node| async move {
        let missing = "a".repeat(64);
        call(
            &node,
            cri::RemoveContainerRequest {
                container_id: missing.clone(),
            },
        )
        .await
        .expect("remove container");
        call(
            &node,
            cri::RemovePodSandboxRequest {
                pod_sandbox_id: missing,
            },
        )
        .await
        .expect("remove sandbox");
        call(
            &node,
            cri::RemoveImageRequest {
                image: image("never-pulled"),
            },
        )
        .await
        .expect("remove image");

        let sandbox = run_pod(&node, "web").await;
        let remove = cri::RemovePodSandboxRequest {
            pod_sandbox_id: sandbox,
        };
        call(&node, remove.clone()).await.expect("first remove");
        call(&node, remove).await.expect("second remove");
    });
}

#[test]
fn pod_ips_are_unique_across_300_sandboxes_and_reused_after_removal() {
    with_node(FakeRuntime::new(), |node| async move {
        let mut sandboxes = Vec::new();
        let mut ips = HashSet::new();
        for n in 0..300 {
            let sandbox = run_pod(&node, &format!("pod-{n}")).await;
            let ip = sandbox_ip(&node, &sandbox).await;
            let parsed: std::net::Ipv4Addr = ip.parse().expect("an IPv4 address");
            assert_eq!(parsed.octets()[..2], [10, 244], "{ip}");
            assert!(ips.insert(ip.clone()), "{ip} handed out twice");
            sandboxes.push((sandbox, ip));
        }
        assert_eq!(ips.len(), 300);

        let (removed, freed_ip) = sandboxes[42].clone();
        call(
            &node,
            cri::StopPodSandboxRequest {
                pod_sandbox_id: removed.clone(),
            },
        )
        .await
        .expect("stop");
        let newcomer = run_pod(&node, "while-stopped").await;
        assert_ne!(
            sandbox_ip(&node, &newcomer).await,
            freed_ip,
            "a stopped sandbox keeps its IP until removed"
        );
        call(
            &node,
            cri::RemovePodSandboxRequest {
                pod_sandbox_id: removed,
            },
        )
        .await
        .expect("remove");
        let successor = run_pod(&node, "successor").await;
        assert_eq!(
            sandbox_ip(&node, &successor).await,
            freed_ip,
            "the freed IP is handed out again"
        );
    });
}

#[test]
fn host_network_sandboxes_get_no_pod_ip_and_report_the_node_namespace() {
    with_node(FakeRuntime::new(), |node| async move {
        let mut config = pod_config("kube-proxy", 0);
        config.linux = Some(cri::LinuxPodSandboxConfig {
            security_context: Some(cri::LinuxSandboxSecurityContext {
                namespace_options: Some(cri::NamespaceOption {
                    network: cri::NamespaceMode::Node as i32,
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        });
        let request = cri::RunPodSandboxRequest {
            config: Some(config),
            ..Default::default()
        };
        let sandbox = call(&node, request).await.expect("run").pod_sandbox_id;
        let status = sandbox_status(&node, &sandbox).await.expect("status");
        assert_eq!(status.network.map(|n| n.ip), Some(String::new()));
        let network = status
            .linux
            .and_then(|l| l.namespaces)
            .and_then(|n| n.options)
            .map(|o| o.network);
        assert_eq!(network, Some(cri::NamespaceMode::Node as i32));

        let pod_network = run_pod(&node, "web").await;
        assert_eq!(
            sandbox_ip(&node, &pod_network).await,
            "10.244.0.2",
            "the first pod IP is still free"
        );
    });
}

#[test]
fn pulls_matching_a_missing_image_rule_fail_naming_the_image() {
    let runtime = FakeRuntime::new()
        .fail_pulls_matching("registry.invalid/")
        .fail_pulls_matching("docker.io/library/missing");
    with_node(runtime, |node| async move {
        let err = pull(&node, "registry.invalid/team/app:v2")
            .await
            .expect_err("missing image");
        assert!(
            matches!(&err, RuntimeError::NotFound { operation: "pull_image", message } if message.contains("registry.invalid/team/app:v2")),
            "{err}"
        );
        let err = pull(&node, "missing:latest")
            .await
            .expect_err("matches in normalized form");
        assert!(
            matches!(&err, RuntimeError::NotFound { operation: "pull_image", message } if message.contains("missing:latest")),
            "{err}"
        );
        pull(&node, "registry.example/team/app:v2")
            .await
            .expect("other images pull");

        let listed = call(&node, cri::ListImagesRequest::default())
            .await
            .expect("list images");
        let tags: Vec<String> = listed
            .images
            .into_iter()
            .flat_map(|i| i.repo_tags)
            .collect();
        assert_eq!(
            tags,
            vec!["registry.example/team/app:v2".to_string()],
            "failed pulls store nothing"
        );
    });
}

#[test]
fn images_are_found_by_short_name_full_name_and_id_and_can_be_removed() {
    with_node(FakeRuntime::new(), |node| async move {
        let id = pull(&node, "nginx").await.expect("pull");
        let status = |reference: &str| cri::ImageStatusRequest {
            image: image(reference),
            verbose: false,
        };
        for reference in [
            "nginx",
            "nginx:latest",
            "docker.io/library/nginx:latest",
            id.as_str(),
        ] {
            let found = call(&node, status(reference))
                .await
                .expect("image status")
                .image;
            let found = found.unwrap_or_else(|| panic!("{reference} not found"));
            assert_eq!(found.id, id);
            assert_eq!(
                found.repo_tags,
                vec!["docker.io/library/nginx:latest".to_string()]
            );
        }
        let absent = call(&node, status("redis"))
            .await
            .expect("status of an absent image is no error");
        assert!(absent.image.is_none());

        pull(&node, "quay.io/org/tool:1").await.expect("pull");
        let only = cri::ListImagesRequest {
            filter: Some(cri::ImageFilter {
                image: image("nginx"),
            }),
        };
        let listed = call(&node, only).await.expect("list");
        assert_eq!(
            listed
                .images
                .iter()
                .map(|i| i.id.clone())
                .collect::<Vec<_>>(),
            vec![id.clone()]
        );
        let all = call(&node, cri::ListImagesRequest::default())
            .await
            .expect("list");
        assert_eq!(all.images.len(), 2);

        call(
            &node,
            cri::RemoveImageRequest {
                image: image("nginx:latest"),
            },
        )
        .await
        .expect("remove");
        assert!(call(&node, status("nginx"))
            .await
            .expect("status")
            .image
            .is_none());
        let left = call(&node, cri::ListImagesRequest::default())
            .await
            .expect("list");
        assert_eq!(left.images.len(), 1);
    });
}

#[test]
fn container_states_follow_cri_rules() {
    with_node(FakeRuntime::new(), |node| async move {
        pull(&node, "busybox").await.expect("pull");
        let sandbox = run_pod(&node, "web").await;
        let app = create(&node, &sandbox, "app", "busybox")
            .await
            .expect("create");

        let exec = cri::ExecSyncRequest {
            container_id: app.clone(),
            cmd: vec!["true".into()],
            timeout: 1,
        };
        let err = call(&node, exec.clone())
            .await
            .expect_err("exec in a created container");
        assert!(
            matches!(&err, RuntimeError::Other { operation: "exec_sync", message, .. } if message.contains("CONTAINER_CREATED")),
            "{err}"
        );
        stop(&node, &app, 10)
            .await
            .expect("stopping a created container is a no-op");
        assert_eq!(
            container_status(&node, &app).await.expect("status").state,
            cri::ContainerState::ContainerCreated as i32
        );

        start(&node, &app).await.expect("start");
        let update = |memory: i64| cri::UpdateContainerResourcesRequest {
            container_id: app.clone(),
            linux: Some(cri::LinuxContainerResources {
                memory_limit_in_bytes: memory,
                ..Default::default()
            }),
            ..Default::default()
        };
        call(&node, update(64 << 20))
            .await
            .expect("resize a running container");
        let resized = container_status(&node, &app).await.expect("status");
        assert_eq!(
            resized
                .resources
                .and_then(|r| r.linux)
                .map(|l| l.memory_limit_in_bytes),
            Some(64 << 20),
            "the status reports the new resources"
        );
        let err = start(&node, &app).await.expect_err("start twice");
        assert!(
            matches!(&err, RuntimeError::Other { operation: "start_container", message, .. } if message.contains("CONTAINER_RUNNING")),
            "{err}"
        );
        let answer = call(&node, exec)
            .await
            .expect("exec in a running container");
        assert_eq!(
            (answer.exit_code, answer.stdout.len(), answer.stderr.len()),
            (0, 0, 0)
        );

        stop(&node, &app, 0)
            .await
            .expect("stop without grace period");
        let killed = container_status(&node, &app).await.expect("status");
        assert_eq!((killed.exit_code, killed.reason.as_str()), (137, "Error"));
        let finished_at = killed.finished_at;
        stop(&node, &app, 10)
            .await
            .expect("stopping an exited container is a no-op");
        assert_eq!(
            container_status(&node, &app)
                .await
                .expect("status")
                .finished_at,
            finished_at
        );
        let err = call(&node, update(32 << 20))
            .await
            .expect_err("an exited container is not resized");
        assert!(
            matches!(
                &err,
                RuntimeError::Other {
                    operation: "update_container",
                    ..
                }
            ),
            "{err}"
        );
        let err = start(&node, &app)
            .await
            .expect_err("an exited container does not restart");
        assert!(
            matches!(
                err,
                RuntimeError::Other {
                    operation: "start_container",
                    ..
                }
            ),
            "{err}"
        );
    });
}

#[test]
fn stopping_a_sandbox_kills_its_containers_and_closes_it_to_new_ones() {
    with_node(FakeRuntime::new(), |node| async move {
        pull(&node, "busybox").await.expect("pull");
        let sandbox = run_pod(&node, "web").await;
        let bystander = run_pod(&node, "other").await;
        let app = create(&node, &sandbox, "app", "busybox")
            .await
            .expect("create");
        let other = create(&node, &bystander, "app", "busybox")
            .await
            .expect("create");
        start(&node, &app).await.expect("start");
        start(&node, &other).await.expect("start");

        call(
            &node,
            cri::StopPodSandboxRequest {
                pod_sandbox_id: sandbox.clone(),
            },
        )
        .await
        .expect("stop sandbox");
        let killed = container_status(&node, &app).await.expect("status");
        assert_eq!(killed.state, cri::ContainerState::ContainerExited as i32);
        assert_eq!(killed.exit_code, 137);
        let untouched = container_status(&node, &other).await.expect("status");
        assert_eq!(
            untouched.state,
            cri::ContainerState::ContainerRunning as i32
        );

        let err = create(&node, &sandbox, "late", "busybox")
            .await
            .expect_err("sandbox not ready");
        assert!(
            matches!(
                err,
                RuntimeError::Other {
                    operation: "create_container",
                    ..
                }
            ),
            "{err}"
        );

        call(
            &node,
            cri::RemovePodSandboxRequest {
                pod_sandbox_id: sandbox.clone(),
            },
        )
        .await
        .expect("remove");
        assert_eq!(
            list_containers(&node, cri::ContainerFilter::default()).await,
            vec![other],
            "its containers went with it"
        );
    });
}

#[test]
fn malformed_requests_are_invalid_arguments() {
    with_node(FakeRuntime::new(), |node| async move {
        let err = call(&node, cri::RunPodSandboxRequest::default())
            .await
            .expect_err("no config");
        assert!(
            matches!(
                err,
                RuntimeError::InvalidArgument {
                    operation: "run_podsandbox",
                    ..
                }
            ),
            "{err}"
        );
        let mut nameless = pod_config("web", 0);
        nameless.metadata.as_mut().expect("metadata").uid.clear();
        let request = cri::RunPodSandboxRequest {
            config: Some(nameless),
            ..Default::default()
        };
        let err = call(&node, request).await.expect_err("no uid");
        assert!(
            matches!(&err, RuntimeError::InvalidArgument { message, .. } if message.contains("uid")),
            "{err}"
        );
        let err = pull(&node, "").await.expect_err("no image");
        assert!(
            matches!(
                err,
                RuntimeError::InvalidArgument {
                    operation: "pull_image",
                    ..
                }
            ),
            "{err}"
        );
        let err = pull(&node, "bad reference").await.expect_err("white space");
        assert!(
            matches!(
                err,
                RuntimeError::InvalidArgument {
                    operation: "pull_image",
                    ..
                }
            ),
            "{err}"
        );
    });
}

#[test]
fn version_and_status_describe_a_ready_fake_runtime() {
    with_node(FakeRuntime::default(), |node| async move {
        let version = call(&node, cri::VersionRequest::default())
            .await
            .expect("version");
        assert_eq!(version.runtime_name, "sergeant-fake");
        assert_eq!(version.runtime_version, env!("CARGO_PKG_VERSION"));
        assert_eq!(version.runtime_api_version, "v1");

        let status = call(&node, cri::StatusRequest::default())
            .await
            .expect("status");
        let conditions: Vec<(String, bool)> = status
            .status
            .expect("runtime status")
            .conditions
            .into_iter()
            .map(|c| (c.r#type, c.status))
            .collect();
        assert_eq!(
            conditions,
            vec![
                ("RuntimeReady".to_string(), true),
                ("NetworkReady".to_string(), true)
            ]
        );
    });
}

#[test]
fn object_ids_differ_between_runtimes() {
    let first = std::sync::Mutex::new(String::new());
    let first = &first;
    with_node(FakeRuntime::new(), |node| async move {
        *first.lock().expect("lock") = run_pod(&node, "web").await;
    });
    with_node(FakeRuntime::new(), |node| async move {
        let second = run_pod(&node, "web").await;
        assert_ne!(
            *first.lock().expect("lock"),
            second,
            "a restarted fake must not reuse ids"
        );
    });
}
