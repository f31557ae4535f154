//! The `cri::call` failpoint fails any CRI call with `Unavailable` (feature `failpoints`).
#![cfg(feature = "failpoints")]

mod common;

use sergeant_runtime_adapters::cri::api::VersionRequest;
use sergeant_runtime_adapters::cri::CriError;

#[tokio::test]
async fn the_call_failpoint_makes_calls_unavailable() {
    let scenario = fail::FailScenario::setup();
    let client = common::client();
    client
        .call(VersionRequest::default())
        .await
        .expect("works without the failpoint");

    fail::cfg("cri::call", "return(injected by test)").expect("configure failpoint");
    let err = client
        .call(VersionRequest::default())
        .await
        .expect_err("failpoint active");
    assert!(
        matches!(
            err,
            CriError::Unavailable {
                operation: "version",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.message().contains("injected by test"), "{err}");

    fail::remove("cri::call");
    client
        .call(VersionRequest::default())
        .await
        .expect("works again");
    scenario.teardown();
}
