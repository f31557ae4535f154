//! The fake adapter streams container events as containerd's CRI server does: created,
//! started, stopped and deleted, for containers and sandboxes, in order, each with the pod
//! sandbox status and the sandbox's container statuses attached. Hollow nodes get an evented
//! PLEG from it.

mod fake_common;

use fake_common::call;

use actix::{Actor, Addr};
use sergeant_messages::container_events::{ContainerEventStream, SubscribeContainerEvents};
use sergeant_messages::runtime::cri;
use sergeant_runtime_adapters::fake::{FakeAdapter, FakeRuntime};

use cri::ContainerEventType as Kind;

async fn subscribe(node: &Addr<FakeAdapter>) -> ContainerEventStream {
    node.send(SubscribeContainerEvents)
        .await
        .expect("the fake adapter is alive")
        .expect("the fake adapter streams events")
}

/// The (kind, object id) of every event waiting in `stream`, checking each carries the status
/// of `sandbox`.
fn drain(stream: &mut ContainerEventStream, sandbox: &str) -> Vec<(Kind, String)> {
    let mut seen = Vec::new();
    while let Ok(item) = stream.try_recv() {
        let event = item.expect("no stream error");
        let status = event
            .pod_sandbox_status
            .as_ref()
            .expect("sandbox status attached");
        assert_eq!(status.id, sandbox, "{event:?}");
        assert_eq!(
            status.metadata.as_ref().map(|m| m.uid.as_str()),
            Some("uid-web"),
            "{event:?}"
        );
        assert!(event.created_at > 0, "{event:?}");
        let kind = Kind::try_from(event.container_event_type).expect("a known event type");
        seen.push((kind, event.container_id));
    }
    seen
}

fn sandbox_config() -> cri::PodSandboxConfig {
    cri::PodSandboxConfig {
        metadata: Some(cri::PodSandboxMetadata {
            name: "web".into(),
            uid: "uid-web".into(),
            namespace: "default".into(),
            attempt: 0,
        }),
        ..Default::default()
    }
}

/// Runs the `web` pod's sandbox and pulls the image its containers use; answers the sandbox.
async fn run_pod(node: &Addr<FakeAdapter>) -> String {
    let sandbox = call(
        node,
        cri::RunPodSandboxRequest {
            config: Some(sandbox_config()),
            ..Default::default()
        },
    )
    .await
    .expect("sandbox")
    .pod_sandbox_id;
    let image = cri::PullImageRequest {
        image: Some(cri::ImageSpec {
            image: "busybox".into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    call(node, image).await.expect("pull");
    sandbox
}

async fn create_and_start(node: &Addr<FakeAdapter>, sandbox: &str, name: &str) -> String {
    let config = cri::ContainerConfig {
        metadata: Some(cri::ContainerMetadata {
            name: name.into(),
            attempt: 0,
        }),
        image: Some(cri::ImageSpec {
            image: "busybox".into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    let id = call(
        node,
        cri::CreateContainerRequest {
            pod_sandbox_id: sandbox.into(),
            config: Some(config),
            sandbox_config: Some(sandbox_config()),
        },
    )
    .await
    .expect("create")
    .container_id;
    call(
        node,
        cri::StartContainerRequest {
            container_id: id.clone(),
        },
    )
    .await
    .expect("start");
    id
}

#[actix_rt::test]
async fn a_pod_life_streams_created_started_stopped_deleted_in_order() {
    let node = FakeAdapter::new(FakeRuntime::new()).start();
    let mut stream = subscribe(&node).await;
    let mut second = subscribe(&node).await;
    let sandbox = run_pod(&node).await;
    let app = create_and_start(&node, &sandbox, "app").await;
    let side = create_and_start(&node, &sandbox, "side").await;
    for _twice_changes_nothing in 0..2 {
        let stop = cri::StopContainerRequest {
            container_id: app.clone(),
            timeout: 1,
        };
        call(&node, stop).await.expect("stop");
    }
    call(
        &node,
        cri::RemoveContainerRequest {
            container_id: app.clone(),
        },
    )
    .await
    .expect("remove");
    call(
        &node,
        cri::StopPodSandboxRequest {
            pod_sandbox_id: sandbox.clone(),
        },
    )
    .await
    .expect("stop sandbox");
    call(
        &node,
        cri::RemovePodSandboxRequest {
            pod_sandbox_id: sandbox.clone(),
        },
    )
    .await
    .expect("remove sandbox");

    let expected = vec![
        (Kind::ContainerCreatedEvent, sandbox.clone()),
        (Kind::ContainerStartedEvent, sandbox.clone()),
        (Kind::ContainerCreatedEvent, app.clone()),
        (Kind::ContainerStartedEvent, app.clone()),
        (Kind::ContainerCreatedEvent, side.clone()),
        (Kind::ContainerStartedEvent, side.clone()),
        (Kind::ContainerStoppedEvent, app.clone()),
        (Kind::ContainerDeletedEvent, app.clone()),
        (Kind::ContainerStoppedEvent, side.clone()),
        (Kind::ContainerStoppedEvent, sandbox.clone()),
        (Kind::ContainerDeletedEvent, side.clone()),
        (Kind::ContainerDeletedEvent, sandbox.clone()),
    ];
    assert_eq!(drain(&mut stream, &sandbox), expected);
    assert_eq!(
        drain(&mut second, &sandbox),
        expected,
        "every subscriber gets every event"
    );
}

#[actix_rt::test]
async fn container_statuses_of_the_sandbox_ride_along() {
    let node = FakeAdapter::new(FakeRuntime::new()).start();
    let sandbox = run_pod(&node).await;
    let mut stream = subscribe(&node).await;
    let app = create_and_start(&node, &sandbox, "app").await;
    let started = stream
        .try_recv()
        .and_then(|_created| stream.try_recv())
        .expect("two events")
        .expect("no error");
    let statuses: Vec<(String, i32)> = started
        .containers_statuses
        .iter()
        .map(|s| (s.id.clone(), s.state))
        .collect();
    assert_eq!(
        statuses,
        [(app, cri::ContainerState::ContainerRunning as i32)],
        "the started event shows the container running"
    );
    drop(stream);
    call(
        &node,
        cri::StopPodSandboxRequest {
            pod_sandbox_id: sandbox,
        },
    )
    .await
    .expect("a subscriber that left costs nothing");
}
