//! Security profiles on the real containerd: the seccomp filter a container's processes run
//! under (read back from the kernel, `/proc/self/status`), a profile file of the node's own
//! that really filters, the node's `seccompDefault`, a profile path that would leave
//! `<root-dir>/seccomp` refused, SELinux labels handed to the runtime, and AppArmor refused
//! on a host that does not enforce it (or enforced where it does).
//!
//! Needs the private containerd `tests/run.sh` starts (SERGEANT_CRI_ENDPOINT) and its local
//! registry with the test images.

mod common;

use std::fs;
use std::path::Path;

use common::node::{container, manifest, phase, Node, SHELL};
use common::runtime::Runtime;
use serde_json::Value;

/// The kernel's seccomp mode of the container's shell: 0 none, 2 a filter.
const SECCOMP_MODE: &str = "grep ^Seccomp: /proc/self/status | tr -d \"[:space:]\"";

/// A pod that runs `script` once and reports its output as its termination message;
/// `pod_security` and `container_security` are the two securityContext bodies (YAML lines
/// at their indentation), empty for none.
fn one_shot(name: &str, pod_security: &str, container_security: &str, script: &str) -> String {
    let pod_sc = if pod_security.is_empty() {
        String::new()
    } else {
        format!("  securityContext:\n{pod_security}")
    };
    let container_sc = if container_security.is_empty() {
        String::new()
    } else {
        format!("    securityContext:\n{container_security}")
    };
    manifest(
        name,
        &format!(
            "  restartPolicy: Never\n{pod_sc}  containers:\n  - name: main\n    image: {SHELL}\n\
             \x20   terminationMessagePolicy: FallbackToLogsOnError\n\
             \x20   command: [sh, -c, '({script}) > /dev/termination-log 2>&1']\n{container_sc}"
        ),
    )
}

/// The termination message of pod `name`'s container once it succeeded.
fn output(node: &Node, name: &str) -> String {
    let pod = node.wait_pod(name, "finished", |p| {
        matches!(phase(p), "Succeeded" | "Failed")
    });
    let main = container(&pod, "containerStatuses", "main");
    assert_eq!(phase(&pod), "Succeeded", "{name}: {pod}");
    main["state"]["terminated"]["message"]
        .as_str()
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// A seccomp profile that lets everything through but `mkdir` and `mkdirat`, which fail with
/// EPERM: what a container under it does shows whether the runtime loaded it.
const DENY_MKDIR: &str = r#"{
  "defaultAction": "SCMP_ACT_ALLOW",
  "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]
}"#;

#[test]
fn seccomp_profiles_of_the_container_the_pod_and_the_node_reach_the_kernel() {
    let node = Node::start("seccomp");
    let profiles = node.agent.dir.path().join("root").join("seccomp");
    fs::create_dir_all(profiles.join("team")).expect("profile dir");
    fs::write(profiles.join("team").join("deny-mkdir.json"), DENY_MKDIR).expect("profile");
    let runtime_default = "    seccompProfile: {type: RuntimeDefault}\n";
    node.write("none.yaml", &one_shot("none", "", "", SECCOMP_MODE));
    node.write(
        "pod-level.yaml",
        &one_shot("pod-level", runtime_default, "", SECCOMP_MODE),
    );
    node.write(
        "container-level.yaml",
        &one_shot(
            "container-level",
            runtime_default,
            "      seccompProfile: {type: Unconfined}\n",
            SECCOMP_MODE,
        ),
    );
    node.write(
        "localhost.yaml",
        &one_shot(
            "localhost",
            "    seccompProfile: {type: Localhost, localhostProfile: team/deny-mkdir.json}\n",
            "",
            "mkdir /tmp/made && echo made || echo refused",
        ),
    );
    for (pod, expected, why) in [
        (
            "none",
            "Seccomp:0",
            "no profile named and seccompDefault off: unconfined",
        ),
        ("pod-level", "Seccomp:2", "the pod's RuntimeDefault"),
        (
            "container-level",
            "Seccomp:0",
            "the container's Unconfined wins over the pod's RuntimeDefault",
        ),
        (
            "localhost",
            "mkdir: can't create directory '/tmp/made': Operation not permitted\nrefused",
            "the node's profile file filters mkdir",
        ),
    ] {
        assert_eq!(output(&node, pod), expected, "{pod}: {why}");
    }
}

#[test]
fn seccomp_default_confines_containers_that_name_no_profile() {
    let node = Node::start_with("seccomp-default", "seccompDefault: true\n");
    node.write("plain.yaml", &one_shot("plain", "", "", SECCOMP_MODE));
    node.write(
        "opted-out.yaml",
        &one_shot(
            "opted-out",
            "",
            "      seccompProfile: {type: Unconfined}\n",
            SECCOMP_MODE,
        ),
    );
    assert_eq!(output(&node, "plain"), "Seccomp:2");
    assert_eq!(output(&node, "opted-out"), "Seccomp:0");
}

#[test]
fn a_seccomp_profile_path_that_leaves_the_profile_directory_is_refused() {
    let node = Node::start("seccomp-escape");
    node.write(
        "escape.yaml",
        &one_shot(
            "escape",
            "",
            "      seccompProfile: {type: Localhost, localhostProfile: ../../../etc/passwd}\n",
            "true",
        ),
    );
    node.write("fine.yaml", &one_shot("fine", "", "", "true"));
    output(&node, "fine");
    let sources = node.agent.get_json("/debug/sources");
    let rejected = sources["file"]["rejected"]
        .as_array()
        .expect("rejected list");
    let errors: Vec<&str> = rejected
        .iter()
        .filter_map(|r| r["error"].as_str())
        .collect();
    assert!(
        errors.iter().any(|e| e.contains("escape.yaml:14")
            && e.contains("seccompProfile.localhostProfile")
            && e.contains("must not contain '..'")),
        "{sources}"
    );
    assert!(node.pod("escape").is_none(), "the refused pod never ran");
}

/// The CRI configuration containerd holds for pod `name`'s container `main`, from its verbose
/// status.
fn runtime_config(node: &Node, name: &str) -> Value {
    let pod = node.wait_pod(name, "Running", |p| phase(p) == "Running");
    let id = container(&pod, "containerStatuses", "main")["containerID"]
        .as_str()
        .and_then(|id| id.strip_prefix("containerd://"))
        .unwrap_or_else(|| panic!("a containerd id: {pod}"))
        .to_owned();
    let info = Runtime::connect().container_info(&id);
    info["config"].clone()
}

#[test]
fn selinux_labels_are_handed_to_the_runtime() {
    let node = Node::start("selinux");
    let spec = format!(
        "  securityContext:\n    seLinuxOptions: {{level: 's0:c1,c2'}}\n  containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n\
         \x20   securityContext:\n      seLinuxOptions: {{type: spc_t, level: 's0:c3,c4'}}\n"
    );
    node.write("labelled.yaml", &manifest("labelled", &spec));
    let config = runtime_config(&node, "labelled");
    let options = &config["linux"]["security_context"]["selinux_options"];
    assert_eq!(
        (options["type"].as_str(), options["level"].as_str()),
        (Some("spc_t"), Some("s0:c3,c4")),
        "the container's labels replace the pod's: {config}"
    );
}

/// Whether this host's kernel enforces AppArmor, read as the runtime reads it.
fn host_enforces_apparmor() -> bool {
    Path::new("/sys/kernel/security/apparmor").is_dir()
        && fs::read_to_string("/sys/module/apparmor/parameters/enabled")
            .is_ok_and(|flag| flag.starts_with('Y'))
}

#[test]
fn an_apparmor_profile_is_enforced_or_the_pod_refused_as_the_host_allows() {
    let node = Node::start("apparmor");
    node.write(
        "confined.yaml",
        &one_shot(
            "confined",
            "",
            "      appArmorProfile: {type: RuntimeDefault}\n",
            "cat /proc/self/attr/current",
        ),
    );
    node.write(
        "unconfined.yaml",
        &one_shot(
            "unconfined",
            "    appArmorProfile: {type: Unconfined}\n",
            "",
            "true",
        ),
    );
    output(&node, "unconfined");
    if host_enforces_apparmor() {
        let label = output(&node, "confined");
        assert!(
            label.starts_with("cri-containerd.apparmor.d"),
            "the runtime's default profile: {label}"
        );
    } else {
        let pod = node.wait_pod("confined", "refused", |p| phase(p) == "Failed");
        assert_eq!(
            (
                pod["status"]["reason"].as_str(),
                pod["status"]["message"].as_str()
            ),
            (
                Some("AppArmor"),
                Some("Cannot enforce AppArmor: AppArmor is not enabled on the host")
            ),
            "{pod}"
        );
    }
}
