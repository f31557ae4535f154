//! Pod-level resources and the resources a status shows, against the real control plane and
//! containerd (InPlacePodVerticalScaling, PodLevelResources): a pod whose pod-level
//! `spec.resources` make it Guaranteed while one container sets nothing runs with the
//! Guaranteed class (before, its class was computed from the containers alone, the API server
//! refused every status write — `status.qosClass: field is immutable` — and the pod was never
//! shown running); its pod cgroup gets the pod-level limits and the bare container the
//! pod's limits; the status shows each container's `resources` as the runtime applied them
//! and `allocatedResources`, and the pod's own `allocatedResources`. A resize through the
//! `resize` subresource is applied in place or by a restart, as each container's
//! `resizePolicy` says — once the node allocated it: one that does not fit waits, shown as
//! `PodResizePending`, until it does.
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT); reads the node's cgroup v1 files.

mod common;

use common::managed::{Managed, DEADLINE};
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
                .all(|c| container_state_running(p, c))
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

/// The `resources` of the status of container `name`, and its restart count and ID.
fn applied(pod: &Value, name: &str) -> (Value, i64, String) {
    let status = container(pod, "containerStatuses", name);
    (
        status["resources"].clone(),
        status["restartCount"].as_i64().unwrap_or(-1),
        status["containerID"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

/// A pod resized through the `resize` subresource: the container whose `resizePolicy` is
/// `NotRequired` keeps running (same ID, no restart) with its cgroup updated in place, the
/// one whose memory policy is `RestartContainer` is restarted once with its new memory
/// limit, the pod cgroup follows, and the status shows the new resources with
/// `observedGeneration` caught up. Before, the changed spec replaced both containers as a new
/// definition.
#[test]
fn a_resize_is_applied_in_place_or_by_restart_as_the_resize_policy_says() {
    let node = Managed::start("pod-resize", &[]);
    let (uid, before) = create_inplace_and_restarted(
        &node,
        "resized",
        "{requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 100m, memory: 64Mi}}",
    );
    let (_, _, inplace_id) = applied(&before, "inplace");
    let (_, restarts_before, restarted_id) = applied(&before, "restarted");
    assert_eq!(pod_cgroup("cpu", &uid, "cpu.cfs_quota_us"), "20000");

    let grown = json!({"requests": {"cpu": "200m", "memory": "128Mi"},
                       "limits": {"cpu": "200m", "memory": "128Mi"}});
    let after = resize_both(&node, "resized", &grown);
    let (_, restarts, id) = applied(&after, "inplace");
    assert_eq!(
        (restarts, id.as_str()),
        (0, inplace_id.as_str()),
        "kept running"
    );
    let (_, restarts, id) = applied(&after, "restarted");
    assert_eq!(restarts, restarts_before + 1, "restarted once");
    assert_ne!(id, restarted_id);
    assert_eq!(
        container(&after, "containerStatuses", "inplace")["allocatedResources"],
        grown["requests"]
    );
    // What containerd applied to the container kept running, and the pod cgroup.
    let linux = Runtime::connect()
        .container_status(inplace_id.trim_start_matches("containerd://"))
        .resources
        .and_then(|r| r.linux)
        .expect("containerd reports the container's resources");
    assert_eq!(
        (
            linux.cpu_quota,
            linux.cpu_shares,
            linux.memory_limit_in_bytes
        ),
        (20_000, 204, 128 << 20)
    );
    assert_eq!(pod_cgroup("cpu", &uid, "cpu.cfs_quota_us"), "40000");
    assert_eq!(
        pod_cgroup("memory", &uid, "memory.limit_in_bytes"),
        (256u64 << 20).to_string()
    );
}

/// A resize of the memory request alone, which no cgroup shows: the container whose memory
/// policy is `RestartContainer` is restarted once (as upstream, which compares requests too),
/// the `NotRequired` one keeps running, and both show the new request. Before, only cgroup
/// values were compared and neither container was restarted.
#[test]
fn a_memory_request_resize_restarts_the_container_whose_policy_says_so() {
    let node = Managed::start("request-resize", &[]);
    let (_, before) = create_inplace_and_restarted(
        &node,
        "requested",
        "{requests: {cpu: 50m, memory: 32Mi}, limits: {cpu: 100m, memory: 64Mi}}",
    );
    let (_, _, inplace_id) = applied(&before, "inplace");
    let (_, restarts_before, restarted_id) = applied(&before, "restarted");

    let asked = json!({"requests": {"cpu": "50m", "memory": "48Mi"},
                       "limits": {"cpu": "100m", "memory": "64Mi"}});
    let after = resize_both(&node, "requested", &asked);
    let (_, restarts, id) = applied(&after, "inplace");
    assert_eq!((restarts, id), (0, inplace_id), "kept running");
    let (_, restarts, id) = applied(&after, "restarted");
    assert_eq!(restarts, restarts_before + 1, "restarted once");
    assert_ne!(id, restarted_id);
}

/// Creates `pod` with two containers of `resources` (a YAML flow mapping), both with cpu
/// policy `NotRequired`: `inplace`, whose memory policy is `NotRequired` too, and
/// `restarted`, whose memory policy is `RestartContainer`; waits until both run, and returns
/// the pod's UID and the pod then.
fn create_inplace_and_restarted(node: &Managed, pod: &str, resources: &str) -> (String, Value) {
    let spec = |name: &str, memory_policy: &str| {
        format!(
            "  - name: {name}\n    image: {SHELL}\n    command: [sleep, '3600']\n    \
             resizePolicy:\n    - {{resourceName: cpu, restartPolicy: NotRequired}}\n    \
             - {{resourceName: memory, restartPolicy: {memory_policy}}}\n    \
             resources: {resources}\n"
        )
    };
    let uid = node.create(
        pod,
        &format!(
            "  containers:\n{}{}",
            spec("inplace", "NotRequired"),
            spec("restarted", "RestartContainer")
        ),
    );
    let before = node.wait_pod(pod, "Running", |p| {
        phase(p) == "Running"
            && ["inplace", "restarted"]
                .iter()
                .all(|c| container_state_running(p, c))
    });
    (uid, before)
}

/// Resizes both containers of `pod` (`inplace` and `restarted`) to `resources` through the
/// `resize` subresource and waits until the status shows them applied, with both running and
/// `observedGeneration` caught up.
fn resize_both(node: &Managed, pod: &str, resources: &Value) -> Value {
    let names = ["inplace", "restarted"];
    let containers: Vec<Value> = names
        .iter()
        .map(|name| json!({"name": name, "resources": resources}))
        .collect();
    node.patch_subresource(pod, "resize", &json!({"spec": {"containers": containers}}));
    node.wait_pod(pod, "resized", |p| {
        p["status"]["observedGeneration"] == p["metadata"]["generation"]
            && names
                .iter()
                .all(|c| &applied(p, c).0 == resources && container_state_running(p, c))
    })
}

fn container_state_running(pod: &Value, name: &str) -> bool {
    !container(pod, "containerStatuses", name)["state"]["running"].is_null()
}

/// A resize that would set a memory limit below what the container uses is not carried out:
/// the pod shows `PodResizeInProgress` with reason `Error` and upstream's message, a
/// `ResizeError` event says it, the container keeps its limit (in the runtime and in its
/// status), and a resize back clears the condition. Before, the lower limit was written
/// regardless.
#[test]
fn a_memory_limit_below_usage_is_not_applied_and_the_pod_says_why() {
    let node = Managed::start("resize-below-usage", &[]);
    let limits = |memory: &str| {
        json!({"requests": {"cpu": "100m", "memory": memory},
                                       "limits": {"cpu": "100m", "memory": memory}})
    };
    // 20 MiB in a tmpfs file, charged to the container's memory cgroup.
    let uid = node.create(
        "filled",
        &format!(
            "  containers:\n  - name: main\n    image: {SHELL}\n    \
             command: [sh, -c, 'dd if=/dev/zero of=/dev/shm/fill bs=1M count=20 && sleep 3600']\n    \
             resizePolicy:\n    - {{resourceName: memory, restartPolicy: NotRequired}}\n    \
             resources:\n      requests: {{cpu: 100m, memory: 64Mi}}\n      limits: {{cpu: 100m, memory: 64Mi}}\n"
        ),
    );
    let running = node.wait_pod("filled", "Running", |p| container_state_running(p, "main"));
    let (_, _, id) = applied(&running, "main");
    let id = id.trim_start_matches("containerd://").to_owned();
    let limit_now = || {
        Runtime::connect()
            .container_status(&id)
            .resources
            .and_then(|r| r.linux)
            .map(|l| l.memory_limit_in_bytes)
    };
    // The file is written before the shell sleeps: wait for the usage to be there.
    common::wait_for(
        "the container to hold its 20 MiB",
        common::node::POD_DEADLINE,
        || (Runtime::connect().memory_usage(&id)? >= 20 << 20).then_some(()),
    );
    let resize_condition = |pod: &Value| {
        pod["status"]["conditions"]
            .as_array()
            .and_then(|all| all.iter().find(|c| c["type"] == "PodResizeInProgress"))
            .cloned()
    };
    node.patch_subresource(
        "filled",
        "resize",
        &json!({"spec": {"containers": [{"name": "main", "resources": limits("10Mi")}]}}),
    );
    let refused = node.wait_pod("filled", "the resize refused", |p| {
        resize_condition(p).is_some_and(|c| c["reason"] == "Error")
    });
    let condition = resize_condition(&refused).expect("the condition");
    let message = condition["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("cannot decrease memory limits: ")
            && message.contains("memory limit (10485760) below current usage ("),
        "{condition}"
    );
    assert_eq!(condition["status"], "True");
    assert_resize_event(
        &node,
        ("filled", &uid),
        ("ResizeError", "Pod resize error"),
        "memory limit (10485760) below current usage (",
    );
    assert_eq!(limit_now(), Some(64 << 20), "the limit was not lowered");
    assert_eq!(
        refused["status"]["resources"]["limits"]["memory"], "64Mi",
        "the pod-level resources show the pod cgroup's limit in force"
    );
    assert_eq!(
        applied(&refused, "main").0["limits"],
        limits("64Mi")["limits"],
        "the status shows the limit in force (its memory request is the one allocated, which \
         no cgroup shows, as upstream): {refused}"
    );

    node.patch_subresource(
        "filled",
        "resize",
        &json!({"spec": {"containers": [{"name": "main", "resources": limits("64Mi")}]}}),
    );
    let settled = node.wait_pod("filled", "the condition cleared", |p| {
        p["status"]["observedGeneration"] == p["metadata"]["generation"]
            && resize_condition(p).is_none()
    });
    assert_eq!(applied(&settled, "main").0, limits("64Mi"));
    assert_eq!(limit_now(), Some(64 << 20));
}

/// The line of `kubelet_pod_pending_resizes` that counts deferred resizes of pods of no
/// priority.
const DEFERRED_PENDING: &str =
    "kubelet_pod_pending_resizes{reason=\"deferred\",priority_bucket=\"normal\"} ";

/// The node's allocatable cpu in millicores, as its Node object reports it once registered.
fn allocatable_cpu_millis(node: &Managed) -> i64 {
    let cpu = common::wait_for("the Node's allocatable cpu", DEADLINE, || {
        let object = node.cluster.get_json(&["node", &node.node])?;
        object["status"]["allocatable"]["cpu"]
            .as_str()
            .map(str::to_owned)
    });
    match cpu.strip_suffix('m') {
        Some(millis) => millis.parse().expect("millicores"),
        None => cpu.parse::<i64>().expect("cores") * 1000,
    }
}

/// The pod's `PodResizePending` condition, if it has one.
fn resize_pending(pod: &Value) -> Option<Value> {
    pod["status"]["conditions"]
        .as_array()
        .and_then(|all| all.iter().find(|c| c["type"] == "PodResizePending"))
        .cloned()
}

/// A Guaranteed pod spec whose one container `main` gets `cpu` and resizes it in place.
fn guaranteed(cpu: &str) -> String {
    format!(
        "  containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n    \
         resizePolicy:\n    - {{resourceName: cpu, restartPolicy: NotRequired}}\n    \
         resources:\n      requests: {{cpu: {cpu}, memory: 64Mi}}\n      \
         limits: {{cpu: {cpu}, memory: 64Mi}}\n"
    )
}

/// The resize patch that gives container `main` `cpu` (millicores).
fn cpu_resize(millis: i64) -> Value {
    let cpu = format!("{millis}m");
    json!({"spec": {"containers": [{"name": "main", "resources": {
        "requests": {"cpu": cpu, "memory": "64Mi"},
        "limits": {"cpu": cpu, "memory": "64Mi"}}}]}})
}

/// The cpu quota containerd applied to container `id`, in µs per 100 ms.
fn cpu_quota(id: &str) -> i64 {
    Runtime::connect()
        .container_status(id)
        .resources
        .and_then(|r| r.linux)
        .expect("containerd reports the container's resources")
        .cpu_quota
}

/// Waits for pod `name` to show its resize pending with reason `Deferred` and `message`, and
/// checks that its container (`id`, of pod `uid`) and pod cgroup keep their 100m, as its status
/// says, and that a `ResizeDeferred` event says why.
fn assert_deferred(node: &Managed, (name, uid, id): (&str, &str, &str), message: &str) {
    let deferred = node.wait_pod(name, "the resize deferred", |p| {
        resize_pending(p).is_some_and(|c| c["reason"] == "Deferred")
    });
    let condition = resize_pending(&deferred).expect("the condition");
    assert_eq!(condition["status"], "True");
    assert_eq!(condition["message"], message, "{condition}");
    assert_eq!(
        condition["observedGeneration"],
        deferred["metadata"]["generation"]
    );
    assert_eq!(cpu_quota(id), 10_000, "the container keeps its limit");
    assert_eq!(pod_cgroup("cpu", uid, "cpu.cfs_quota_us"), "10000");
    let main = container(&deferred, "containerStatuses", "main");
    assert_eq!(main["allocatedResources"]["cpu"], "100m", "{main}");
    assert_eq!(main["resources"]["limits"]["cpu"], "100m", "{main}");
    assert_eq!(deferred["status"]["allocatedResources"]["cpu"], "100m");
    assert_resize_event(
        node,
        (name, uid),
        ("ResizeDeferred", "Pod resize Deferred"),
        message,
    );
}

/// Waits for an event of pod `(name, uid)` with `reason` and checks its message is upstream's:
/// `prefix`, then the summary of the pod's resources, which holds `error`.
fn assert_resize_event(
    node: &Managed,
    pod: (&str, &str),
    (reason, prefix): (&str, &str),
    error: &str,
) {
    let event = node.wait_event(pod, reason, |_| true);
    let said = event["message"].as_str().unwrap_or_default();
    assert!(
        said.starts_with(&format!("{prefix}: {{")) && said.contains(error),
        "{event}"
    );
}

/// Runs pod `holder`, which requests all but 500m of the node's allocatable cpu, and pod
/// `grower` (Guaranteed, 100m), then resizes `grower` to 800m and checks the resize is deferred (see
/// [`assert_deferred`]). Returns `grower`'s UID and container ID.
fn grower_beside_holder(node: &Managed, (holder, grower): (&str, &str)) -> (String, String) {
    let allocatable = allocatable_cpu_millis(node);
    let held = allocatable - 500;
    node.create(
        holder,
        &format!(
            "  containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n    \
             resources:\n      requests: {{cpu: {held}m}}\n"
        ),
    );
    let uid = node.create(grower, &guaranteed("100m"));
    let running = node.wait_pod(grower, "Running", |p| container_state_running(p, "main"));
    node.wait_pod(holder, "Running", |p| container_state_running(p, "main"));
    let (_, _, id) = applied(&running, "main");
    let id = id.trim_start_matches("containerd://").to_owned();

    node.patch_subresource(grower, "resize", &cpu_resize(800));
    assert_deferred(
        node,
        (grower, &uid, &id),
        &format!(
            "Node didn't have enough resource: cpu, requested: 800, used: {held}, capacity: \
             {allocatable}"
        ),
    );
    (uid, id)
}

/// A resize that does not fit beside another pod's requests is not applied: the pod shows
/// `PodResizePending` with reason `Deferred` and upstream's message, keeps its allocated cpu
/// (containerd, the pod cgroup, its status); once the other pod is deleted the resize is
/// allocated and applied, and the condition goes. Upstream's metrics count it pending while it
/// waits, then accepted after being deferred upon pods removed, with how long it waited.
/// Before, the resize was applied at once, whatever the node had left.
#[test]
fn a_resize_that_does_not_fit_beside_another_pod_waits_until_that_pod_goes() {
    let node = Managed::start("resize-deferred", &[]);
    let (uid, id) = grower_beside_holder(&node, ("holder", "grower"));
    assert_eq!(node.metric(DEFERRED_PENDING), Some(1.0));

    node.cluster
        .kubectl(&["delete", "pod", "holder", "-n", "default", "--wait=false"]);
    let resized = node.wait_pod("grower", "the resize applied", |p| {
        resize_pending(p).is_none()
            && applied(p, "main").0["limits"]["cpu"] == "800m"
            && p["status"]["observedGeneration"] == p["metadata"]["generation"]
    });
    assert_eq!(
        container(&resized, "containerStatuses", "main")["allocatedResources"]["cpu"],
        "800m"
    );
    assert_eq!(cpu_quota(&id), 80_000);
    assert_eq!(pod_cgroup("cpu", &uid, "cpu.cfs_quota_us"), "80000");
    node.wait_event(("grower", &uid), "ResizeStarted", |_| true);
    assert_eq!(
        node.metric("kubelet_pod_deferred_accepted_resizes_total{retry_trigger=\"pods_removed\"}"),
        Some(1.0)
    );
    assert_eq!(node.metric(DEFERRED_PENDING), Some(0.0));
    assert_eq!(
        node.metric(
            "kubelet_pod_deferred_resize_duration_seconds_count{resolution=\"accepted\",\
             priority_bucket=\"normal\"}"
        ),
        Some(1.0)
    );
}

/// A sergeant killed (SIGKILL) while a resize waits and started again admits its pods at what
/// it had allocated them (its checkpoint in the root directory): neither pod is refused, the
/// waiter's container keeps its 100m, and its resize waits again as `Deferred`, counted as
/// pending by the new process. Before, the restarted sergeant admitted each pod at what it
/// asks — the waiter at 800m beside the keeper — and refused one of them (OutOfcpu).
#[test]
fn a_restarted_sergeant_keeps_the_allocations_and_the_waiting_resize() {
    let mut node = Managed::start("resize-restart", &[]);
    let (uid, id) = grower_beside_holder(&node, ("keeper", "waiter"));
    node.agent.signal(nix::sys::signal::Signal::SIGKILL);
    node.agent.wait_exit(std::time::Duration::from_secs(10));
    node.agent.restart_in_place();

    common::wait_for(
        "the restarted sergeant to count the resize pending",
        DEADLINE,
        || (node.metric(DEFERRED_PENDING)? == 1.0).then_some(()),
    );
    assert_eq!(
        node.metric("kubelet_admission_rejections_total"),
        None,
        "no pod refused: {}",
        node.agent.log_tail(40)
    );
    assert_eq!(cpu_quota(&id), 10_000, "the container keeps its allocation");
    let waiter = node.wait_pod("waiter", "still deferred", |p| {
        resize_pending(p).is_some_and(|c| c["reason"] == "Deferred")
    });
    assert_eq!(
        applied(&waiter, "main").2,
        format!("containerd://{id}"),
        "same container"
    );
    assert_eq!(pod_cgroup("cpu", &uid, "cpu.cfs_quota_us"), "10000");
    let keeper = node.pod("keeper").expect("the keeper");
    assert_eq!(phase(&keeper), "Running", "{keeper}");
}

/// Has the API server take the resize `patch` of pod `name` while the Node says `status` (a
/// merge patch of its status). The API server checks a resize against the Node as it stands
/// (its allocatable, the features it declares); sergeant writes its own status back at its
/// next node status round, so the pair is tried again, until the deadline, should that round
/// or the API server's cache of the Node come in between.
fn resize_while_the_node_says(node: &Managed, status: &Value, name: &str, patch: &Value) {
    let (status, patch) = (json!({ "status": status }).to_string(), patch.to_string());
    common::wait_for("the API server to take the resize", DEADLINE, || {
        node.cluster.kubectl(&[
            "patch",
            "node",
            &node.node,
            "--subresource=status",
            "--type=merge",
            "-p",
            &status,
        ]);
        let (taken, _) = node.cluster.kubectl(&[
            "patch",
            "pod",
            name,
            "-n",
            "default",
            "--subresource=resize",
            "--type=strategic",
            "-p",
            &patch,
        ]);
        taken.then_some(())
    });
}

/// A resize past the node's allocatable cpu is not applied either: the pod keeps its 100m and
/// shows `PodResizePending`, reason `Deferred` — upstream v1.37's kubelet defers it as any
/// resize that does not fit (its `Infeasible` is for what the node cannot do at all, such as
/// resizing on Windows). Its API server refuses such a resize against the Node's allocatable
/// first, so the test has the Node report more cpu than sergeant admits against, just before
/// it resizes. Before, the resize was applied.
#[test]
fn a_resize_past_the_allocatable_is_not_applied() {
    let node = Managed::start("resize-past-allocatable", &[]);
    let allocatable = allocatable_cpu_millis(&node);
    let uid = node.create("outgrower", &guaranteed("100m"));
    let running = node.wait_pod("outgrower", "Running", |p| {
        container_state_running(p, "main")
    });
    let (_, _, id) = applied(&running, "main");
    let id = id.trim_start_matches("containerd://").to_owned();

    let wanted = allocatable + 1000;
    resize_while_the_node_says(
        &node,
        &json!({"allocatable": {"cpu": "64"}}),
        "outgrower",
        &cpu_resize(wanted),
    );
    assert_deferred(
        &node,
        ("outgrower", &uid, &id),
        &format!(
            "Node didn't have enough resource: cpu, requested: {wanted}, used: 0, capacity: \
             {allocatable}"
        ),
    );
}

/// A Guaranteed pod spec with pod-level requests and limits of `pod_cpu` and 128Mi, whose one
/// container `main` gets 100m and 64Mi and resizes its cpu in place.
fn with_pod_level(pod_cpu: &str) -> String {
    format!(
        "  resources:\n    requests: {{cpu: {pod_cpu}, memory: 128Mi}}\n    \
         limits: {{cpu: {pod_cpu}, memory: 128Mi}}\n{}",
        guaranteed("100m")
    )
}

/// With `featureGates: {InPlacePodLevelResourcesVerticalScaling: false}` a resize of a pod's
/// pod-level resources is not applied: the pod shows `PodResizePending`, reason `Infeasible`,
/// with upstream's message and a `ResizeInfeasible` event, and keeps its pod cgroup's cpu
/// quota; its status shows no pod-level `resources` or `allocatedResources`. A resize of another such pod's container alone is applied as
/// with the gate on. The node does not declare the feature, so the API server refuses a
/// pod-level resize itself; the test has the Node declare it just before. Before (the gate
/// read only for the declaration), the pod-level resize was applied.
#[test]
fn with_the_gate_off_a_pod_level_resize_is_infeasible_and_a_container_resize_is_not() {
    let node = Managed::start_with(
        "pods-resize-plr-gate-off",
        &[],
        common::TestConfig::new()
            .kubelet("featureGates:\n  InPlacePodLevelResourcesVerticalScaling: false\n"),
        &[],
    );
    let uid = node.create("podlevel", &with_pod_level("200m"));
    node.create("containers", &with_pod_level("200m"));
    node.wait_pod("podlevel", "Running", |p| {
        container_state_running(p, "main")
    });
    let running = node.wait_pod("containers", "Running", |p| {
        container_state_running(p, "main")
    });
    let (_, _, id) = applied(&running, "main");
    let id = id.trim_start_matches("containerd://").to_owned();
    assert_eq!(pod_cgroup("cpu", &uid, "cpu.cfs_quota_us"), "20000");

    let declared = json!({"declaredFeatures": [
        "InPlacePodLevelResourcesVerticalScaling",
        "InPlacePodVerticalScalingInitContainers",
        "RestartAllContainersOnContainerExits",
    ]});
    let pod_cpu = json!({"spec": {"resources": {
        "requests": {"cpu": "400m", "memory": "128Mi"},
        "limits": {"cpu": "400m", "memory": "128Mi"}}}});
    resize_while_the_node_says(&node, &declared, "podlevel", &pod_cpu);
    let refused = node.wait_pod("podlevel", "the resize infeasible", |p| {
        resize_pending(p).is_some_and(|c| c["reason"] == "Infeasible")
    });
    let condition = resize_pending(&refused).expect("the condition");
    assert_eq!(condition["status"], "True");
    assert_eq!(
        condition["message"], "InPlacePodLevelResourcesVerticalScaling is disabled",
        "{condition}"
    );
    assert_eq!(
        condition["observedGeneration"],
        refused["metadata"]["generation"]
    );
    assert_eq!(pod_cgroup("cpu", &uid, "cpu.cfs_quota_us"), "20000");
    // As upstream's kubelet with the gate off, no pod-level figures in the status.
    let status = &refused["status"];
    assert_eq!(
        (&status["resources"], &status["allocatedResources"]),
        (&Value::Null, &Value::Null),
        "{status}"
    );
    assert_resize_event(
        &node,
        ("podlevel", &uid),
        ("ResizeInfeasible", "Pod resize Infeasible"),
        "\"error\":\"InPlacePodLevelResourcesVerticalScaling is disabled\"}",
    );

    assert_eq!(
        node.metric("kubelet_pod_infeasible_resizes_total{reason_detail=\"plr_feature_gate_off\"}"),
        Some(1.0)
    );

    node.patch_subresource("containers", "resize", &cpu_resize(150));
    let resized = node.wait_pod("containers", "the container resized", |p| {
        applied(p, "main").0["limits"]["cpu"] == "150m"
            && p["status"]["observedGeneration"] == p["metadata"]["generation"]
    });
    assert!(resize_pending(&resized).is_none(), "{resized}");
    assert_eq!(cpu_quota(&id), 15_000);
}
