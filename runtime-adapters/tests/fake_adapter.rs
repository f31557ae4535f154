//! The fake adapter as an actor of the agent: its calls are counted in the upstream runtime
//! metrics, and its failpoint (feature `failpoints`) makes it unavailable or kills it.

mod fake_common;

use fake_common::call;

use std::sync::OnceLock;

use actix::Actor;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use sergeant_messages::runtime::{cri, RuntimeCall, RuntimeOperation};
use sergeant_messages::runtime_error::RuntimeError;
use sergeant_runtime_adapters::fake::{FakeAdapter, FakeRuntime};

/// The Prometheus recorder of this test binary, installed on first use.
fn recorder() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        PrometheusBuilder::new()
            .install_recorder()
            .expect("install the recorder")
    })
}

/// The value of `series` in the rendered metrics (0 when absent).
fn sample(series: &str) -> f64 {
    recorder()
        .render()
        .lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or(0.0)
}

fn sandbox(name: &str) -> cri::RunPodSandboxRequest {
    cri::RunPodSandboxRequest {
        config: Some(cri::PodSandboxConfig {
            metadata: Some(cri::PodSandboxMetadata {
                name: name.to_string(),
                uid: format!("uid-{name}"),
                namespace: "metrics".to_string(),
                attempt: 0,
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn every_call_is_counted_and_timed_under_the_upstream_names() {
    // Failpoints are global to the binary: hold the scenario lock so none fires meanwhile.
    let scenario = fail::FailScenario::setup();
    recorder();
    let total = r#"kubelet_runtime_operations_total{operation_type="run_podsandbox"}"#;
    let errors = r#"kubelet_runtime_operations_errors_total{operation_type="run_podsandbox"}"#;
    let timed =
        r#"kubelet_runtime_operations_duration_seconds_count{operation_type="run_podsandbox"}"#;
    let before = (sample(total), sample(errors), sample(timed));

    actix_rt::System::new().block_on(async {
        let node = FakeAdapter::new(FakeRuntime::new()).start();
        call(&node, sandbox("a")).await.expect("run a");
        call(&node, sandbox("b")).await.expect("run b");
        call(&node, sandbox("a"))
            .await
            .expect_err("a again: already exists");
        call(&node, cri::VersionRequest::default())
            .await
            .expect("version");
    });

    assert_eq!(sample(total) - before.0, 3.0, "{}", recorder().render());
    assert_eq!(sample(errors) - before.1, 1.0, "{}", recorder().render());
    assert_eq!(sample(timed) - before.2, 3.0, "{}", recorder().render());
    assert!(sample(r#"kubelet_runtime_operations_total{operation_type="version"}"#) >= 1.0);
    scenario.teardown();
}

#[cfg(feature = "failpoints")]
#[test]
fn the_call_failpoint_makes_one_call_unavailable_then_service_resumes() {
    let scenario = fail::FailScenario::setup();
    actix_rt::System::new().block_on(async {
        let node = FakeAdapter::new(FakeRuntime::new()).start();
        call(&node, sandbox("before"))
            .await
            .expect("works without the failpoint");

        fail::cfg("fake::call", "1*return(down)").expect("configure the failpoint");
        let err = call(&node, sandbox("during"))
            .await
            .expect_err("the failpoint fires once");
        assert_eq!(
            err,
            RuntimeError::Unavailable {
                operation: "run_podsandbox",
                message: "down".to_string()
            }
        );
        call(&node, sandbox("during"))
            .await
            .expect("the failed call changed nothing; normal service");
        let listed = call(&node, cri::ListPodSandboxRequest::default())
            .await
            .expect("list");
        assert_eq!(listed.items.len(), 2, "state survived the injected failure");
    });
    scenario.teardown();
}

#[cfg(feature = "failpoints")]
#[test]
fn the_call_failpoint_can_panic_the_actor_for_its_supervisor_to_see() {
    let scenario = fail::FailScenario::setup();
    actix_rt::System::new().block_on(async {
        // Run the actor the way the supervisor does, so its death is observable.
        let context = actix::Context::<FakeAdapter>::new();
        let node = actix::AsyncContext::address(&context);
        let task = actix_rt::spawn(context.into_future(FakeAdapter::new(FakeRuntime::new())));
        call(&node, cri::VersionRequest::default())
            .await
            .expect("alive");

        fail::cfg("fake::call", "1*panic(injected)").expect("configure the failpoint");
        let in_flight = node
            .send(RuntimeCall(cri::VersionRequest::default().into_request()))
            .await;
        assert!(
            matches!(in_flight, Err(actix::MailboxError::Closed)),
            "{in_flight:?}"
        );
        let died = task.await.expect_err("the actor died");
        assert!(died.is_panic(), "{died}");
    });
    scenario.teardown();
}
