//! Live reload of the configuration file under a running sergeant: valid changes are applied
//! without a restart, restart-only fields are reported and not half-applied, and an invalid
//! edit keeps the running configuration and reports why.

mod common;

use std::fs;
use std::time::Duration;

use common::{wait_for, Agent, TestConfig, TEST_EVICTION_HARD};
use nix::sys::signal::Signal;

const RELOAD_DEADLINE: Duration = Duration::from_secs(10);

#[test]
fn a_valid_edit_is_applied_live_in_the_same_process() {
    let config = TestConfig::new().kubelet("maxPods: 110\n");
    let agent = Agent::start(&config, &[]);
    let pid = agent.pid();
    let edited = TestConfig {
        kubelet_extra:
            "maxPods: 42\nevictionHard:\n  memory.available: 250Mi\nlogging:\n  verbosity: 4\n"
                .into(),
        ..config
    };
    fs::write(&agent.config_path, edited.render()).expect("config edited");

    let state = wait_for("the new maxPods", RELOAD_DEADLINE, || {
        let state = agent.get_json("/debug/config");
        (state["active"]["kubelet"]["maxPods"] == 42).then_some(state)
    });
    assert_eq!(agent.pid(), pid);
    assert_eq!(state["generation"], 2);
    assert_eq!(
        state["active"]["kubelet"]["evictionHard"]["memory.available"],
        "250Mi"
    );
    assert_eq!(state["active"]["kubelet"]["logging"]["verbosity"], 4);
    let changed: Vec<&str> = state["lastReload"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["field"].as_str().unwrap())
        .collect();
    for field in ["maxPods", "evictionHard", "logging"] {
        assert!(
            changed.iter().any(|c| c.starts_with(field)),
            "{field} in {changed:?}"
        );
    }
    assert!(
        state["restartRequired"].as_array().unwrap().is_empty(),
        "{state}"
    );
    assert!(state["lastError"].is_null());
}

#[test]
fn a_restart_only_field_is_reported_and_not_applied() {
    let config = TestConfig::new();
    let agent = Agent::start(&config, &[]);
    let new_port = common::free_port();
    let old_port = config.port;
    let edited = TestConfig {
        port: new_port,
        kubelet_extra: "maxPods: 7\n".to_owned(),
        ..config
    };
    fs::write(&agent.config_path, edited.render()).expect("config edited");

    let state = wait_for("the reload", RELOAD_DEADLINE, || {
        let state = agent.get_json("/debug/config");
        (state["active"]["kubelet"]["maxPods"] == 7).then_some(state)
    });
    assert_eq!(state["restartRequired"], serde_json::json!(["port"]));
    assert_eq!(
        state["active"]["kubelet"]["port"], old_port,
        "the running port is kept"
    );
}

#[test]
fn an_invalid_edit_keeps_the_running_config_and_reports_the_error() {
    // The test machine's thresholds, written out so the edit can break one of them.
    let config = TestConfig::new().kubelet(&format!("maxPods: 110\n{TEST_EVICTION_HARD}"));
    let agent = Agent::start(&config, &[]);
    let text = config
        .render()
        .replace("maxPods: 110\n", "maxPods: 50\n")
        .replace("memory.available: 100Mi", "memory.available: lots");
    fs::write(&agent.config_path, text).expect("config edited");

    let state = wait_for("the reload error", RELOAD_DEADLINE, || {
        let state = agent.get_json("/debug/config");
        (!state["lastError"].is_null()).then_some(state)
    });
    let message = state["lastError"]["message"].as_str().unwrap();
    let file = agent.config_path.display().to_string();
    assert!(message.starts_with(&format!("{file}:10:")), "{message}");
    assert!(
        message.contains("evictionHard.memory.available"),
        "{message}"
    );
    assert_eq!(
        state["active"]["kubelet"]["maxPods"], 110,
        "the running config is untouched"
    );
    assert_eq!(state["generation"], 1);
    let (_, metrics) = agent.get("/metrics");
    assert!(
        metrics.contains("sergeant_config_reload_failures_total 1"),
        "{metrics}"
    );

    // Fixing the file clears the error and applies the change.
    fs::write(
        &agent.config_path,
        config.render().replace("maxPods: 110", "maxPods: 60"),
    )
    .expect("config fixed");
    let state = wait_for("the fixed reload", RELOAD_DEADLINE, || {
        let state = agent.get_json("/debug/config");
        (state["active"]["kubelet"]["maxPods"] == 60).then_some(state)
    });
    assert!(state["lastError"].is_null(), "{state}");
}

#[test]
fn sighup_re_reads_the_file_and_keeps_running() {
    let config = TestConfig::new();
    let agent = Agent::start(&config, &[]);
    agent.signal(Signal::SIGHUP);
    wait_for("the SIGHUP re-read", RELOAD_DEADLINE, || {
        agent
            .log()
            .contains("SIGHUP: re-reading the configuration")
            .then_some(())
    });
    assert_eq!(agent.get("/healthz").0, 200);
}
