//! Sandboxes and containers through their whole life on the real runtime.

mod common;

use std::time::Duration;

use sergeant_runtime_adapters::cri::api::{
    ContainerFilter, ContainerState, ContainerStateValue, ContainerStatusRequest,
    CreateContainerRequest, ExecSyncRequest, ListContainersRequest, ListPodSandboxRequest,
    PodSandboxFilter, PodSandboxState, PodSandboxStateValue, PodSandboxStatusRequest,
    RemoveContainerRequest, RemovePodSandboxRequest, StartContainerRequest, StopContainerRequest,
    StopPodSandboxRequest,
};
use sergeant_runtime_adapters::cri::{CriClient, CriError};

use common::SHELL_IMAGE;

const WAIT: Duration = Duration::from_secs(30);

/// The status request of container `id`.
fn container_status_of(id: &str) -> ContainerStatusRequest {
    ContainerStatusRequest {
        container_id: id.to_owned(),
        verbose: false,
    }
}

/// The status request of sandbox `id`.
fn sandbox_status_of(id: &str) -> PodSandboxStatusRequest {
    PodSandboxStatusRequest {
        pod_sandbox_id: id.to_owned(),
        verbose: false,
    }
}

async fn container_state(client: &CriClient, id: &str) -> ContainerState {
    let status = client
        .call(container_status_of(id))
        .await
        .expect("container status");
    let state = status.status.expect("status present").state;
    ContainerState::try_from(state).expect("known state")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandbox_and_container_create_start_stop_remove() {
    let common::TestSandbox {
        client,
        test_id,
        guard,
        logs: _logs,
        config: sandbox_config,
        id: sandbox_id,
    } = common::test_sandbox("lifecycle", SHELL_IMAGE).await;
    let sandbox = client
        .call(sandbox_status_of(&sandbox_id))
        .await
        .expect("sandbox status");
    let sandbox_status = sandbox.status.expect("sandbox status present");
    assert_eq!(sandbox_status.state, PodSandboxState::SandboxReady as i32);
    assert_eq!(
        sandbox_status.metadata.as_ref().map(|m| m.name.as_str()),
        Some(test_id.as_str())
    );

    let config =
        common::container_config(&test_id, "sleeper", SHELL_IMAGE, &["sleep", "3600"], &[]);
    let container_id = client
        .call(CreateContainerRequest {
            pod_sandbox_id: sandbox_id.clone(),
            config: Some(config),
            sandbox_config: Some(sandbox_config.clone()),
        })
        .await
        .expect("create container")
        .container_id;
    assert_eq!(
        container_state(&client, &container_id).await,
        ContainerState::ContainerCreated
    );

    client
        .call(StartContainerRequest {
            container_id: container_id.clone(),
        })
        .await
        .expect("start container");
    assert_eq!(
        container_state(&client, &container_id).await,
        ContainerState::ContainerRunning
    );

    let exec = client
        .call(ExecSyncRequest {
            container_id: container_id.clone(),
            cmd: vec!["echo".into(), "hello".into()],
            timeout: 5,
        })
        .await
        .expect("exec");
    assert_eq!(exec.exit_code, 0);
    assert_eq!(String::from_utf8_lossy(&exec.stdout).trim(), "hello");

    // SIGTERM first, SIGKILL after the 1 s grace period if it is still running.
    client
        .call(StopContainerRequest {
            container_id: container_id.clone(),
            timeout: 1,
        })
        .await
        .expect("stop container");
    let status = client
        .call(container_status_of(&container_id))
        .await
        .expect("status")
        .status
        .expect("present");
    assert_eq!(status.state, ContainerState::ContainerExited as i32);
    assert!(
        [128 + 15, 128 + 9].contains(&status.exit_code),
        "ended by SIGTERM or SIGKILL: {status:?}"
    );

    client
        .call(RemoveContainerRequest {
            container_id: container_id.clone(),
        })
        .await
        .expect("remove container");
    let err = client
        .call(container_status_of(&container_id))
        .await
        .expect_err("gone");
    assert!(
        matches!(
            err,
            CriError::NotFound {
                operation: "container_status",
                ..
            }
        ),
        "{err}"
    );

    client
        .call(StopPodSandboxRequest {
            pod_sandbox_id: sandbox_id.clone(),
        })
        .await
        .expect("stop sandbox");
    let stopped = client
        .call(sandbox_status_of(&sandbox_id))
        .await
        .expect("status");
    assert_eq!(
        stopped.status.map(|s| s.state),
        Some(PodSandboxState::SandboxNotready as i32)
    );
    client
        .call(RemovePodSandboxRequest {
            pod_sandbox_id: sandbox_id.clone(),
        })
        .await
        .expect("remove sandbox");
    let err = client
        .call(sandbox_status_of(&sandbox_id))
        .await
        .expect_err("gone");
    assert!(matches!(err, CriError::NotFound { .. }), "{err}");

    common::assert_nothing_left(&client, &test_id).await;
    drop(guard);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_code_of_a_finished_container_is_observed() {
    let common::TestSandbox {
        client,
        test_id,
        guard,
        logs: _logs,
        config: sandbox_config,
        id: sandbox_id,
    } = common::test_sandbox("exitcode", common::EXIT_IMAGE).await;
    let config = common::container_config(
        &test_id,
        "exiter",
        common::EXIT_IMAGE,
        &[],
        &[("EXIT_CODE", "7")],
    );
    let container_id = client
        .call(CreateContainerRequest {
            pod_sandbox_id: sandbox_id,
            config: Some(config),
            sandbox_config: Some(sandbox_config),
        })
        .await
        .expect("create")
        .container_id;
    client
        .call(StartContainerRequest {
            container_id: container_id.clone(),
        })
        .await
        .expect("start");

    let status = common::wait_for(WAIT, "the exit container to exit", || {
        let client = client.clone();
        let id = container_id.clone();
        async move {
            let status = client.call(container_status_of(&id)).await.ok()?.status?;
            (status.state == ContainerState::ContainerExited as i32).then_some(status)
        }
    })
    .await;
    assert_eq!(status.exit_code, 7, "{status:?}");
    // containerd stamps started_at after the start call returns, so a container this short
    // can show finished_at < started_at: only check both are set.
    assert!(
        status.started_at > 0 && status.finished_at > 0,
        "{status:?}"
    );
    assert_eq!(status.reason, "Error", "{status:?}");

    common::remove_test_sandboxes(&client, &test_id).await;
    common::assert_nothing_left(&client, &test_id).await;
    drop(guard);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn label_filters_return_exactly_the_tests_objects() {
    let common::TestSandbox {
        client,
        test_id,
        guard,
        logs: _logs,
        config: sandbox_config,
        id: sandbox_id,
    } = common::test_sandbox("filter", SHELL_IMAGE).await;
    let mut created = Vec::new();
    for name in ["one", "two"] {
        let config = common::container_config(&test_id, name, SHELL_IMAGE, &["sleep", "3600"], &[]);
        let id = client
            .call(CreateContainerRequest {
                pod_sandbox_id: sandbox_id.clone(),
                config: Some(config),
                sandbox_config: Some(sandbox_config.clone()),
            })
            .await
            .expect("create")
            .container_id;
        created.push(id);
    }
    client
        .call(StartContainerRequest {
            container_id: created[0].clone(),
        })
        .await
        .expect("start");
    created.sort();

    let by_label = ContainerFilter {
        label_selector: common::labels_of(&test_id),
        ..ContainerFilter::default()
    };
    let mut listed: Vec<String> = client
        .call(ListContainersRequest {
            filter: Some(by_label.clone()),
        })
        .await
        .expect("list")
        .containers
        .into_iter()
        .map(|c| c.id)
        .collect();
    listed.sort();
    assert_eq!(listed, created);

    let running = ContainerFilter {
        state: Some(ContainerStateValue {
            state: ContainerState::ContainerRunning as i32,
        }),
        ..by_label
    };
    let listed: Vec<String> = client
        .call(ListContainersRequest {
            filter: Some(running),
        })
        .await
        .expect("list running")
        .containers
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(listed.len(), 1, "{listed:?}");

    let sandboxes = client
        .call(ListPodSandboxRequest {
            filter: Some(PodSandboxFilter {
                label_selector: common::labels_of(&test_id),
                state: Some(PodSandboxStateValue {
                    state: PodSandboxState::SandboxReady as i32,
                }),
                ..PodSandboxFilter::default()
            }),
        })
        .await
        .expect("list sandboxes")
        .items;
    assert_eq!(
        sandboxes.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        [sandbox_id.as_str()]
    );

    let other = client
        .call(ListContainersRequest {
            filter: Some(ContainerFilter {
                label_selector: common::labels_of(&common::unique("nobody")),
                ..ContainerFilter::default()
            }),
        })
        .await
        .expect("list other")
        .containers;
    assert!(other.is_empty(), "{other:?}");

    common::remove_test_sandboxes(&client, &test_id).await;
    common::assert_nothing_left(&client, &test_id).await;
    drop(guard);
}
