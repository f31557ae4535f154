//! Container event subscriptions through the CRI adapter actor on the real containerd 1.6,
//! which does not implement `GetContainerEvents`: the subscription fails with the typed
//! `Unimplemented` error, at once, so the PLEG can fall back to relisting without noise.

mod common;

use std::time::{Duration, Instant};

use actix::Actor;
use sergeant_config::Endpoint;
use sergeant_messages::container_events::SubscribeContainerEvents;
use sergeant_messages::runtime_error::RuntimeError;
use sergeant_runtime_adapters::cri::{CriAdapter, CriClient};

#[actix_rt::test]
async fn containerd_1_6_refuses_the_subscription_as_unimplemented_at_once() {
    let adapter = CriAdapter::new(common::client()).start();
    let asked = Instant::now();
    let answer = adapter
        .send(SubscribeContainerEvents)
        .await
        .expect("the adapter is alive");
    match answer {
        Err(RuntimeError::Unimplemented { operation, .. }) => {
            assert_eq!(operation, "get_container_events");
        }
        Err(other) => panic!("expected Unimplemented, got {other}"),
        Ok(_) => panic!("expected Unimplemented, got a stream (containerd >= 1.7?)"),
    }
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "a refusal needs no waiting: {:?}",
        asked.elapsed()
    );
}

#[actix_rt::test]
async fn an_unreachable_runtime_is_unavailable_not_unimplemented() {
    let dir = tempfile::tempdir().expect("tempdir");
    let endpoint =
        Endpoint::parse(&format!("unix://{}/none.sock", dir.path().display())).expect("endpoint");
    let client = CriClient::for_endpoint(endpoint).expect("lazy client");
    let adapter = CriAdapter::new(client).start();
    let answer = adapter
        .send(SubscribeContainerEvents)
        .await
        .expect("the adapter is alive");
    assert!(
        matches!(answer, Err(RuntimeError::Unavailable { .. })),
        "{:?}",
        answer.err()
    );
}
