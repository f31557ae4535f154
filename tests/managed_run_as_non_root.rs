//! `runAsNonRoot` against the user the image runs as, on the real containerd with pods from the
//! real API server: a container with `runAsNonRoot` and no `runAsUser` whose image names no
//! user (so runs as root) is not created — it waits in `CreateContainerConfigError` with a
//! `Failed` event, as upstream ("Security Context When creating a container with runAsNonRoot
//! should not run without a specified user ID"); the same container with a non-root
//! `runAsUser` runs. Before, the first one ran as root.
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT).

mod common;

use common::managed::Managed;
use common::node::{container, phase, SHELL};

#[test]
fn run_as_non_root_refuses_an_image_that_runs_as_root() {
    let node = Managed::start("non-root", &[]);
    let spec = |run_as_user: &str| {
        format!(
            "  restartPolicy: Never\n  containers:\n  - name: main\n    image: {SHELL}\n    command: [id, -u]\n    \
             securityContext:\n      runAsNonRoot: true\n{run_as_user}"
        )
    };
    let uid = node.create("implicit-root", &spec(""));
    node.create("explicit-user", &spec("      runAsUser: 1000\n"));

    let pod = node.wait_pod("implicit-root", "CreateContainerConfigError", |p| {
        container(p, "containerStatuses", "main")["state"]["waiting"]["reason"]
            == "CreateContainerConfigError"
    });
    let message = container(&pod, "containerStatuses", "main")["state"]["waiting"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(
        message,
        "pod default/implicit-root: spec.containers[0].securityContext.runAsNonRoot: container has runAsNonRoot and image will run as root"
    );
    let event = node.wait_event(("implicit-root", &uid), "Failed", |_| true);
    assert_eq!(event["type"], "Warning", "{event}");
    assert_eq!(event["message"], format!("Error: {message}"), "{event}");

    node.wait_pod("explicit-user", "Succeeded", |p| phase(p) == "Succeeded");
}
