//! Bad configuration stops start-up with one precise line naming file, line, field and reason,
//! and exit code 2.

mod common;

use common::run_to_exit;

const HEAD: &str = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";

fn rejected(body: &str) -> String {
    let (code, stderr) = run_to_exit(&format!("{HEAD}{body}"));
    assert_eq!(code, Some(2), "exit code for {body:?}: {stderr}");
    stderr.trim().to_owned()
}

#[test]
fn an_unparsable_eviction_threshold_names_the_line_and_field() {
    let error = rejected("maxPods: 50\nevictionHard:\n  memory.available: \"lots\"\n");
    assert!(
        error.starts_with("sergeant: invalid configuration: CONFIG:5:"),
        "{error}"
    );
    assert!(error.contains("evictionHard.memory.available"), "{error}");
    assert!(error.contains("lots"), "{error}");
}

#[test]
fn a_misspelled_field_gets_a_suggestion() {
    let error = rejected("maxPods: 50\nevictonHard:\n  memory.available: 100Mi\n");
    assert!(error.contains("CONFIG:4:"), "{error}");
    assert!(error.contains("unknown field \"evictonHard\""), "{error}");
    assert!(error.contains("did you mean \"evictionHard\"?"), "{error}");
}

#[test]
fn a_wrong_type_is_named() {
    let error = rejected("maxPods: many\n");
    assert!(error.contains("CONFIG:3:"), "{error}");
    assert!(error.contains("maxPods"), "{error}");
}

#[test]
fn malformed_yaml_is_named() {
    let error = rejected("maxPods: [1, 2\n");
    assert!(error.contains("CONFIG:"), "{error}");
    assert!(error.contains("malformed YAML"), "{error}");
}

#[test]
fn an_out_of_range_value_is_named() {
    let error = rejected("healthzPort: 70000\n");
    assert!(error.contains("CONFIG:3:"), "{error}");
    assert!(error.contains("healthzPort"), "{error}");
}

#[test]
fn a_missing_file_is_named() {
    let output = std::process::Command::new(common::binary())
        .args(["--config", "/nonexistent/sergeant.yaml"])
        .output()
        .expect("sergeant runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("/nonexistent/sergeant.yaml: cannot read"),
        "{stderr}"
    );
}
