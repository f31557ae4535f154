//! Pod-level resources and the resources a status shows, against the real control plane and
//! containerd (InPlacePodVerticalScaling, PodLevelResources): a pod whose pod-level
//! `spec.resources` make it Guaranteed while one container sets nothing runs with the
//! Guaranteed class (before, its class was computed from the containers alone, the API server
//! refused every status write — `status.qosClass: field is immutable` — and the pod was never
//! shown running); its pod cgroup gets the pod-level limits and the bare container the
//! pod's limits; the status shows each container's `resources` as the runtime applied them
//! and `allocatedResources`, and the pod's own `allocatedResources`.
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT); reads the node's cgroup v1 files.

mod common;

use common::managed::Managed;
use common::node::{container, phase, SHELL};
use common::runtime::Runtime;
use serde_json::{json, Value};

/// Reads `file` of the pod cgroup of `uid` (a Guaranteed pod) in the v1 `controller` hierarchy.
fn pod_cgroup(controller: &str, uid: &str, file: &str) -> String {
    let path = format!("/sys/fs/cgroup/{controller}/kubepods/pod{uid}/{file}");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .trim()
        .to_owned()
}

#[test]
fn pod_level_resources_set_the_class_the_cgroups_and_the_status() {
    let node = Managed::start("pod-resources", &[]);
    let uid = node.create(
        "plr",
        &format!(
            "  resources:\n    requests: {{cpu: 200m, memory: 64Mi}}\n    limits: {{cpu: 200m, memory: 64Mi}}\n  \
             containers:\n  - name: bare\n    image: {SHELL}\n    command: [sleep, '3600']\n  \
             - name: own\n    image: {SHELL}\n    command: [sleep, '3600']\n    resources:\n      \
             requests: {{cpu: 100m, memory: 32Mi}}\n      limits: {{cpu: 100m, memory: 32Mi}}\n"
        ),
    );
    let pod = node.wait_pod("plr", "Running with both containers", |p| {
        phase(p) == "Running"
            && ["bare", "own"]
                .iter()
                .all(|c| !container(p, "containerStatuses", c)["state"]["running"].is_null())
    });
    assert_eq!(pod["status"]["qosClass"], "Guaranteed", "{pod}");

    let own = container(&pod, "containerStatuses", "own");
    let want = json!({"cpu": "100m", "memory": "32Mi"});
    assert_eq!(own["allocatedResources"], want, "{own}");
    assert_eq!(own["resources"]["requests"], want, "{own}");
    assert_eq!(own["resources"]["limits"], want, "{own}");
    // A container that sets nothing shows empty resources, and no allocation of its own.
    let bare = container(&pod, "containerStatuses", "bare");
    assert_eq!(bare["resources"], json!({}), "{bare}");
    assert_eq!(bare["allocatedResources"], Value::Null, "{bare}");
    assert_eq!(
        pod["status"]["allocatedResources"],
        json!({"cpu": "200m", "memory": "64Mi"}),
        "{pod}"
    );

    // The pod cgroup holds the pod-level limits.
    assert_eq!(pod_cgroup("cpu", &uid, "cpu.cfs_quota_us"), "20000");
    assert_eq!(pod_cgroup("cpu", &uid, "cpu.shares"), "204");
    assert_eq!(
        pod_cgroup("memory", &uid, "memory.limit_in_bytes"),
        (64u64 << 20).to_string()
    );
    // The bare container runs with the pod's limits, as containerd reports them.
    let id = bare["containerID"]
        .as_str()
        .and_then(|id| id.strip_prefix("containerd://"))
        .expect("a container ID");
    let status = Runtime::connect().container_status(id);
    let linux = status
        .resources
        .and_then(|r| r.linux)
        .expect("containerd reports the container's resources");
    assert_eq!(
        (
            linux.cpu_quota,
            linux.cpu_period,
            linux.memory_limit_in_bytes
        ),
        (20_000, 100_000, 64 << 20)
    );
}
