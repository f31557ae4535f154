//! Supervision of the real tree, with faults injected through the `FAILPOINTS` environment
//! variable (the binary is built with the `failpoints` feature for tests).
#![cfg(feature = "failpoints")]

mod common;

use std::time::Duration;

use common::{tree_node, try_get, wait_for, Agent, TestConfig};

#[test]
fn a_panic_in_the_cni_adapter_restarts_it_and_the_later_runtime_children_only() {
    let agent = Agent::start(
        &TestConfig::new(),
        &[(
            "FAILPOINTS",
            "cni-adapter::check=1*panic(injected cni crash)",
        )],
    );
    let tree = wait_for("the cni adapter's restart", Duration::from_secs(10), || {
        let tree = agent.get_json("/debug/supervision");
        (tree_node(&tree, "root/runtime/cni-adapter")["restarts"] == 1).then_some(tree)
    });
    let adapter = tree_node(&tree, "root/runtime/cni-adapter");
    let failure = adapter["last_failure"]["message"].as_str().unwrap();
    assert!(
        failure.contains("panicked") && failure.contains("injected cni crash"),
        "{failure}"
    );
    assert_eq!(
        tree_node(&tree, "root/runtime/pleg")["restarts"],
        1,
        "rest_for_one restarts the later siblings"
    );
    for untouched in [
        "root/runtime",
        "root/runtime/runtime-adapter",
        "root/node/gc",
        "root/pods/sources",
        "root/server",
    ] {
        assert_eq!(
            tree_node(&tree, untouched)["restarts"],
            0,
            "{untouched} was not restarted"
        );
    }
    let (_, metrics) = agent.get("/metrics");
    assert!(
        metrics.contains(r#"sergeant_actor_restarts_total{actor="root/runtime/cni-adapter"} 1"#),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"sergeant_actor_restarts_total{actor="root/runtime/pleg"} 1"#),
        "{metrics}"
    );
    assert!(
        !metrics.contains(r#"sergeant_actor_restarts_total{actor="root/node/gc"}"#),
        "{metrics}"
    );
}

#[test]
fn healthz_fails_while_a_child_waits_out_its_backoff() {
    let config = TestConfig::new().sergeant("supervision:\n  backoffInitial: 30s\n");
    let agent = Agent::start(
        &config,
        &[("FAILPOINTS", "gc::tick=1*return(injected gc failure)")],
    );
    let body = wait_for(
        "healthz to fail",
        Duration::from_secs(10),
        || match try_get(&format!("{}/healthz", agent.healthz)) {
            Ok((500, body)) => Some(body),
            _ => None,
        },
    );
    assert!(body.contains("root/node/gc"), "{body}");
    let tree = agent.get_json("/debug/supervision");
    let gc = tree_node(&tree, "root/node/gc");
    assert_eq!(gc["state"], "restarting");
    assert_eq!(
        gc["last_failure"]["message"],
        "failed: fault injected at failpoint gc::tick: injected gc failure"
    );
}

#[test]
fn past_the_restart_intensity_the_failure_escalates_and_the_root_giving_up_exits_non_zero() {
    let config = TestConfig::new().sergeant(
        "supervision:\n  restartIntensity: 1\n  backoffInitial: 10ms\n  backoffMax: 20ms\n",
    );
    let mut agent = Agent::spawn(
        &config,
        &[("FAILPOINTS", "gc::tick=panic(gc always fails)")],
    );
    let status = agent.wait_exit(Duration::from_secs(30));
    assert_eq!(status.code(), Some(1), "{}", agent.log());
    let log = agent.log();
    assert!(
        log.contains("gave up on root/node/gc after more than 1 restarts"),
        "{log}"
    );
    assert!(
        log.contains("root supervisor gave up, exiting: gave up on root/node"),
        "{log}"
    );
}

#[test]
fn a_listener_that_dies_is_restarted_and_serves_again() {
    // The read-only listener's accept loop ends at the first connection it would take; its
    // supervisor starts it again and the next request is served.
    let agent = Agent::start(
        &TestConfig::new(),
        &[(
            "FAILPOINTS",
            "server::accept=1*return(injected accept failure)",
        )],
    );
    let tree = wait_for("a listener's restart", Duration::from_secs(20), || {
        // Any connection lets the failpoint fire in whichever listener takes it first.
        let _ = try_get(&format!("{}/healthz", agent.read_only));
        let tree = agent.get_json("/debug/supervision");
        [
            "root/server/healthz",
            "root/server/read-only",
            "root/server/kubelet-api",
        ]
        .into_iter()
        .find(|path| tree_node(&tree, path)["restarts"] == 1)
        .map(|path| (path, tree))
    });
    let (died, tree) = tree;
    let failure = tree_node(&tree, died)["last_failure"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        failure.contains("injected accept failure"),
        "{died}: {failure}"
    );
    assert_eq!(tree_node(&tree, died)["state"], "running", "{tree}");
    assert_eq!(tree_node(&tree, "root/server")["restarts"], 0, "{tree}");
    let (status, _) = agent.get("/healthz");
    assert_eq!(status, 200, "the read-only port serves again");
    let (status, _) = try_get(&format!("{}/healthz", agent.healthz)).expect("healthz answers");
    assert_eq!(status, 200);
}
