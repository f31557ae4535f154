//! Static pods on the real containerd, start to finish: sergeant in standalone mode runs the
//! manifests of its static pod directory and reports them at `/pods`.
//!
//! Needs the private containerd `tests/run.sh` starts (SERGEANT_CRI_ENDPOINT) and its local
//! registry with the test images.

mod common;

use std::fs;
use std::time::Duration;

use common::node::{container, manifest, phase, sleeper, Node, POD_DEADLINE, SHELL};
use common::runtime::Runtime;
use common::wait_for;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::Value;

#[test]
fn a_static_pod_runs_and_is_reported_running_with_its_ip() {
    let node = Node::start("runs");
    node.write("sleeper.yaml", &sleeper("sleeper"));
    let pod = node.wait_pod("sleeper", "Running", |p| phase(p) == "Running");
    let main = container(&pod, "containerStatuses", "main");
    assert_eq!(main["ready"], true, "{pod}");
    assert!(main["state"]["running"]["startedAt"].is_string(), "{pod}");
    assert!(
        main["containerID"]
            .as_str()
            .unwrap()
            .starts_with("containerd://"),
        "{pod}"
    );
    assert!(
        pod["status"]["podIP"]
            .as_str()
            .unwrap_or_default()
            .starts_with("10.88."),
        "{pod}"
    );
    assert_eq!(pod["status"]["qosClass"], "BestEffort");
    let ready = pod["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .cloned();
    assert_eq!(ready.unwrap()["status"], "True", "{pod}");
    let (_, metrics) = node.agent.get("/metrics");
    assert!(
        metrics.contains("kubelet_pod_start_duration_seconds_count 1"),
        "{metrics}"
    );
    assert!(metrics.contains("kubelet_running_pods 1"), "{metrics}");
}

#[test]
fn an_init_container_prepares_an_empty_dir_the_app_reads() {
    let node = Node::start("init");
    let spec = format!(
        "  initContainers:\n  - name: prepare\n    image: {SHELL}\n    command: [sh, -c, 'echo ready > /work/flag']\n    volumeMounts:\n    - {{name: work, mountPath: /work}}\n\
         \x20 containers:\n  - name: app\n    image: {SHELL}\n    command: [sh, -c, 'test \"$(cat /work/flag)\" = ready && exec sleep 3600']\n    volumeMounts:\n    - {{name: work, mountPath: /work}}\n\
         \x20 volumes:\n  - name: work\n    emptyDir: {{}}\n"
    );
    node.write("init.yaml", &manifest("init", &spec));
    let pod = node.wait_pod("init", "Running", |p| phase(p) == "Running");
    assert_eq!(
        container(&pod, "containerStatuses", "app")["restartCount"],
        0,
        "the app found the file at once: {pod}"
    );
    let init = container(&pod, "initContainerStatuses", "prepare");
    assert_eq!(init["state"]["terminated"]["exitCode"], 0, "{pod}");
}

#[test]
fn a_crash_looping_container_is_restarted_with_back_off() {
    let node = Node::start("crash");
    node.write(
        "crash.yaml",
        &manifest("crash", &format!("  containers:\n  - name: fails\n    image: {SHELL}\n    command: [sh, -c, 'exit 3']\n")),
    );
    let pod = node.wait_pod("crash", "CrashLoopBackOff after restarts", |p| {
        let c = container(p, "containerStatuses", "fails");
        c["restartCount"].as_u64().unwrap_or(0) >= 2
            && c["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    });
    let fails = container(&pod, "containerStatuses", "fails");
    assert_eq!(fails["lastState"]["terminated"]["exitCode"], 3, "{pod}");
    assert!(
        fails["state"]["waiting"]["message"]
            .as_str()
            .unwrap()
            .starts_with("back-off "),
        "{pod}"
    );
}

#[test]
fn a_crash_loop_back_off_runs_from_the_end_of_the_last_run_not_its_start() {
    // The node's back-off: 1 s, doubled, capped at 4 s. Each run lasts 3 s, so a wait counted
    // from the run's start (as before) would restart at once after it; upstream counts from
    // its end (finishedAt), and so does sergeant.
    let node = Node::start("crash-from-end");
    node.write(
        "slow-crash.yaml",
        &manifest("slow-crash", &format!("  containers:\n  - name: fails\n    image: {SHELL}\n    command: [sh, -c, 'sleep 3; exit 3']\n")),
    );
    let pod = node.wait_pod("slow-crash", "running its fourth restart", |p| {
        let c = container(p, "containerStatuses", "fails");
        c["restartCount"].as_u64().unwrap_or(0) >= 4 && c["state"]["running"].is_object()
    });
    let fails = container(&pod, "containerStatuses", "fails");
    let time = |pointer: &str| {
        let text = fails
            .pointer(pointer)
            .and_then(|v| v.as_str())
            .unwrap_or_else(|| panic!("{pointer} in {pod}"));
        text.parse::<k8s_openapi::jiff::Timestamp>()
            .unwrap_or_else(|e| panic!("{text}: {e}"))
    };
    let waited = time("/state/running/startedAt").as_second()
        - time("/lastState/terminated/finishedAt").as_second();
    // The fourth restart owes the 4 s cap; the API's times are whole seconds.
    assert!(
        waited >= 3,
        "restarted {waited} s after the last run ended: {pod}"
    );
}

#[test]
fn a_never_restarted_pod_that_fails_is_failed() {
    let node = Node::start("never");
    node.write(
        "never.yaml",
        &manifest("never", &format!("  restartPolicy: Never\n  containers:\n  - name: once\n    image: {SHELL}\n    command: [sh, -c, 'exit 4']\n")),
    );
    let pod = node.wait_pod("never", "Failed", |p| phase(p) == "Failed");
    let once = container(&pod, "containerStatuses", "once");
    assert_eq!(once["state"]["terminated"]["exitCode"], 4, "{pod}");
    assert_eq!(once["restartCount"], 0, "{pod}");
}

#[test]
fn a_deleted_manifest_runs_pre_stop_and_the_pod_is_gone_within_its_grace_period() {
    let node = Node::start("delete");
    let host = tempfile::tempdir().expect("a host dir");
    let spec = format!(
        "  terminationGracePeriodSeconds: 3\n  containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n\
         \x20   lifecycle:\n      preStop:\n        exec:\n          command: [sh, -c, 'echo stopping > /host/pre-stop']\n\
         \x20   volumeMounts:\n    - {{name: host, mountPath: /host}}\n  volumes:\n  - name: host\n    hostPath:\n      path: {}\n",
        host.path().display()
    );
    node.write("delete.yaml", &manifest("delete", &spec));
    let pod = node.wait_pod("delete", "Running", |p| phase(p) == "Running");
    let uid = pod["metadata"]["uid"].as_str().expect("a uid").to_owned();
    assert!(
        !pod_cgroups(&uid).is_empty(),
        "the running pod has cgroups named pod{uid}"
    );
    let removed = std::time::Instant::now();
    node.remove("delete.yaml");
    wait_for("the pod to be gone", Duration::from_secs(15), || {
        node.pod("delete").is_none().then_some(())
    });
    assert!(
        removed.elapsed() < Duration::from_secs(3 + 2 + 5),
        "gone within the grace period (plus detection): {:?}",
        removed.elapsed()
    );
    let pre_stop = fs::read_to_string(host.path().join("pre-stop")).expect("the preStop hook ran");
    assert_eq!(pre_stop.trim(), "stopping");
    wait_for(
        "the pod's cgroups removed from every hierarchy",
        Duration::from_secs(15),
        || pod_cgroups(&uid).is_empty().then_some(()),
    );
}

/// The cgroup directories of pod `uid` (`kubepods[/<qos>]/pod<uid>`) in every mounted
/// hierarchy, the unified one of a hybrid machine included.
fn pod_cgroups(uid: &str) -> Vec<std::path::PathBuf> {
    let name = format!("pod{uid}");
    let mut roots: Vec<std::path::PathBuf> = fs::read_dir("/sys/fs/cgroup")
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .collect();
    roots.push("/sys/fs/cgroup".into());
    roots
        .iter()
        .flat_map(|root| {
            ["", "besteffort", "burstable"].map(|qos| root.join("kubepods").join(qos).join(&name))
        })
        .filter(|dir| dir.is_dir())
        .collect()
}

#[test]
fn a_broken_manifest_is_rejected_alone() {
    let node = Node::start("broken");
    node.write("broken.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: broken\nspec:\n  containers:\n  - name: x\n    imagee: nope\n");
    node.write(
        "good.yaml",
        &manifest(
            "good",
            &format!(
                "  containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n"
            ),
        ),
    );
    node.wait_pod("good", "Running", |p| phase(p) == "Running");
    let sources = node.agent.get_json("/debug/sources");
    let rejected = sources["file"]["rejected"]
        .as_array()
        .expect("rejected manifests listed");
    assert_eq!(rejected.len(), 1, "{sources}");
    let error = rejected[0]["error"].as_str().unwrap();
    assert!(
        error.contains("broken.yaml:8") && error.contains("imagee"),
        "{error}"
    );
}

#[test]
fn a_sidecar_keeps_running_while_the_app_restarts() {
    let node = Node::start("sidecar");
    let spec = format!(
        "  initContainers:\n  - name: helper\n    image: {SHELL}\n    restartPolicy: Always\n    command: [sleep, '3600']\n\
         \x20 containers:\n  - name: app\n    image: {SHELL}\n    command: [sh, -c, 'sleep 1; exit 1']\n"
    );
    node.write("sidecar.yaml", &manifest("sidecar", &spec));
    let first = node.wait_pod("sidecar", "the sidecar running", |p| {
        container(p, "initContainerStatuses", "helper")["state"]["running"].is_object()
    });
    let sidecar_id = container(&first, "initContainerStatuses", "helper")["containerID"].clone();
    let later = node.wait_pod("sidecar", "app restarted twice", |p| {
        container(p, "containerStatuses", "app")["restartCount"]
            .as_u64()
            .unwrap_or(0)
            >= 2
    });
    let helper = container(&later, "initContainerStatuses", "helper");
    assert_eq!(
        helper["containerID"], sidecar_id,
        "the sidecar outlived the app's restarts: {later}"
    );
    assert_eq!(helper["restartCount"], 0);
}

#[test]
fn a_sidecar_with_a_startup_probe_holds_the_app_until_it_has_started() {
    let node = Node::start("sidecar-startup");
    // The sidecar passes its startup probe about 3 s after it starts; as upstream, the app
    // waits for that.
    let spec = format!(
        "  initContainers:\n  - name: proxy\n    image: {SHELL}\n    restartPolicy: Always\n    \
         command: [sh, -c, 'sleep 3; touch /tmp/started; sleep 3600']\n    \
         startupProbe:\n      exec: {{command: [cat, /tmp/started]}}\n      periodSeconds: 1\n      failureThreshold: 30\n\
         \x20 containers:\n  - name: app\n    image: {SHELL}\n    command: [sleep, '3600']\n"
    );
    node.write("sidecar-startup.yaml", &manifest("sidecar-startup", &spec));
    let pod = node.wait_pod("sidecar-startup", "the app running", |p| {
        container(p, "containerStatuses", "app")["state"]["running"].is_object()
    });
    let proxy = container(&pod, "initContainerStatuses", "proxy");
    assert_eq!(proxy["started"], true, "{pod}");
    let app = container(&pod, "containerStatuses", "app");
    // API times have whole seconds: 3 s or more apart shows as at least 2.
    let waited = api_seconds(&app["state"]["running"]["startedAt"])
        - api_seconds(&proxy["state"]["running"]["startedAt"]);
    assert!(
        waited >= 2,
        "the app started {waited} s after its sidecar, before the sidecar's startup probe could pass: {pod}"
    );
}

#[test]
fn a_pod_whose_app_finished_stops_its_sidecar_and_succeeds() {
    let node = Node::start("sidecar-done");
    let spec = format!(
        "  restartPolicy: Never\n  initContainers:\n  - name: proxy\n    image: {SHELL}\n    restartPolicy: Always\n    command: [sleep, '3600']\n\
         \x20 containers:\n  - name: app\n    image: {SHELL}\n    command: [sh, -c, 'sleep 1; exit 0']\n"
    );
    node.write("sidecar-done.yaml", &manifest("sidecar-done", &spec));
    let pod = node.wait_pod("sidecar-done", "Succeeded, its sidecar stopped", |p| {
        phase(p) == "Succeeded"
            && container(p, "initContainerStatuses", "proxy")["state"]["terminated"].is_object()
    });
    let app = container(&pod, "containerStatuses", "app");
    assert_eq!(app["state"]["terminated"]["exitCode"], 0, "{pod}");
    assert_eq!(app["restartCount"], 0, "{pod}");
    let proxy = container(&pod, "initContainerStatuses", "proxy");
    assert_eq!(proxy["restartCount"], 0, "stopped, not restarted: {pod}");
}

#[test]
fn sidecars_stop_after_the_app_last_defined_first() {
    // The second sidecar's preStop hook asks the first one (same network) whether it is still
    // up: it must be, as upstream stops sidecars one at a time in reverse order.
    let node = Node::start("sidecar-order");
    let host = tempfile::tempdir().expect("a host dir");
    let spec = format!(
        "  terminationGracePeriodSeconds: 10\n  initContainers:\n\
         \x20 - name: server\n    image: {SHELL}\n    restartPolicy: Always\n    command: [httpd, -f, -p, '8080']\n\
         \x20 - name: hooked\n    image: {SHELL}\n    restartPolicy: Always\n    command: [sleep, '3600']\n\
         \x20   lifecycle:\n      preStop:\n        exec:\n          \
         command: [sh, -c, 'if nc -w 2 127.0.0.1 8080 </dev/null; then echo up; else echo down; fi > /host/server']\n\
         \x20   volumeMounts:\n    - {{name: host, mountPath: /host}}\n\
         \x20 containers:\n  - name: app\n    image: {SHELL}\n    command: [sleep, '3600']\n\
         \x20 volumes:\n  - name: host\n    hostPath:\n      path: {}\n",
        host.path().display()
    );
    node.write("sidecar-order.yaml", &manifest("sidecar-order", &spec));
    node.wait_pod("sidecar-order", "Running", |p| phase(p) == "Running");
    node.remove("sidecar-order.yaml");
    // The hook's shell creates the file before its check ends (the redirection is opened
    // first): its answer is the file's first non-empty content.
    let seen = wait_for("the preStop hook's answer", POD_DEADLINE, || {
        fs::read_to_string(host.path().join("server"))
            .ok()
            .filter(|answer| !answer.trim().is_empty())
    });
    assert_eq!(
        seen.trim(),
        "up",
        "the first sidecar was stopped before the second's preStop"
    );
}

#[test]
fn after_kill_9_a_restarted_sergeant_adopts_its_pods_without_restarting_them() {
    let node = Node::start("adopt");
    node.write(
        "adopt.yaml",
        &manifest(
            "adopt",
            &format!(
                "  containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n"
            ),
        ),
    );
    let before = node.wait_pod("adopt", "Running", |p| phase(p) == "Running");
    let id = container(&before, "containerStatuses", "main")["containerID"].clone();
    let mut node = node;
    node.agent.signal(nix::sys::signal::Signal::SIGKILL);
    node.agent.wait_exit(Duration::from_secs(10));
    node.agent.restart_in_place();
    let after = node.wait_pod("adopt", "Running again", |p| phase(p) == "Running");
    let main = container(&after, "containerStatuses", "main");
    assert_eq!(main["containerID"], id, "same container: {after}");
    assert_eq!(main["restartCount"], 0);
}

#[test]
fn termination_messages_come_from_the_file_or_the_log_on_error() {
    let node = Node::start("message");
    let spec = format!(
        "  restartPolicy: Never\n  containers:\n  - name: file\n    image: {SHELL}\n    \
         command: [sh, -c, 'echo written to the file > /dev/termination-log']\n  \
         - name: logs\n    image: {SHELL}\n    terminationMessagePolicy: FallbackToLogsOnError\n    \
         command: [sh, -c, 'echo the last words; exit 2']\n  \
         - name: nonroot\n    image: {SHELL}\n    securityContext: {{runAsUser: 1000}}\n    \
         terminationMessagePath: /dev/termination-custom-log\n    \
         command: [sh, -c, 'echo -n DONE > /dev/termination-custom-log']\n"
    );
    node.write("message.yaml", &manifest("message", &spec));
    let pod = node.wait_pod("message", "all exited", |p| {
        ["file", "logs", "nonroot"]
            .iter()
            .all(|c| container(p, "containerStatuses", c)["state"]["terminated"].is_object())
    });
    let terminated =
        |name| container(&pod, "containerStatuses", name)["state"]["terminated"].clone();
    assert!(
        terminated("file")["message"]
            .as_str()
            .unwrap_or_default()
            .contains("written to the file"),
        "{pod}"
    );
    assert!(
        terminated("logs")["message"]
            .as_str()
            .unwrap_or_default()
            .contains("the last words"),
        "{pod}"
    );
    assert_eq!(terminated("logs")["exitCode"], 2);
    // A non-root user writes its message at a path of its own, as upstream's conformance spec
    // does: the file is writable by any user.
    assert_eq!(terminated("nonroot")["exitCode"], 0, "{pod}");
    assert_eq!(terminated("nonroot")["message"], "DONE", "{pod}");
}

#[test]
fn an_http_get_pre_stop_hook_reaches_the_container_by_named_port() {
    let node = Node::start("httpget");
    let host = tempfile::tempdir().expect("a host dir");
    // The container answers one HTTP request on its port `hook` after reading it (so the
    // answer never comes before the request), records it, and tells the test when it listens.
    fs::write(
        host.path().join("answer.sh"),
        "while read -r line; do echo \"$line\" >> /host/request; [ \"${#line}\" -le 1 ] && break; done\n\
         printf 'HTTP/1.1 200 OK\\r\\nContent-Length: 0\\r\\nConnection: close\\r\\n\\r\\n'\n",
    )
    .expect("the answering script written");
    let serve = "nc -l -p 8080 -e sh /host/answer.sh & \
                 until netstat -ltn | grep -q ':8080 '; do sleep 0.1; done; touch /host/listening; wait; sleep 3600";
    let spec = format!(
        "  terminationGracePeriodSeconds: 5\n  containers:\n  - name: main\n    image: {SHELL}\n    command: [sh, -c, \"{serve}\"]\n\
         \x20   ports:\n    - {{name: hook, containerPort: 8080}}\n\
         \x20   lifecycle:\n      preStop:\n        httpGet:\n          path: /pre-stop-ran\n          port: hook\n\
         \x20   volumeMounts:\n    - {{name: host, mountPath: /host}}\n  volumes:\n  - name: host\n    hostPath:\n      path: {}\n",
        host.path().display()
    );
    node.write("httpget.yaml", &manifest("httpget", &spec));
    node.wait_pod("httpget", "Running", |p| phase(p) == "Running");
    wait_for("the container to listen", POD_DEADLINE, || {
        host.path().join("listening").exists().then_some(())
    });
    node.remove("httpget.yaml");
    wait_for("the pod to be gone", Duration::from_secs(20), || {
        node.pod("httpget").is_none().then_some(())
    });
    let request = fs::read_to_string(host.path().join("request")).expect("the request recorded");
    assert!(
        request.starts_with("GET /pre-stop-ran HTTP/1.1\r\n"),
        "{request:?} DEBUGLOG {}",
        node.agent.log()
    );
    assert!(
        request.contains("kube-lifecycle/1.37"),
        "the hook names itself: {request:?}"
    );
}

#[test]
fn a_pod_past_its_active_deadline_is_stopped_and_failed() {
    let node = Node::start("deadline");
    let spec = format!(
        "  activeDeadlineSeconds: 3\n  containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n"
    );
    node.write("deadline.yaml", &manifest("deadline", &spec));
    node.wait_pod("deadline", "Running", |p| phase(p) == "Running");
    let failed = node.wait_pod("deadline", "Failed by its deadline", |p| {
        phase(p) == "Failed"
    });
    assert_eq!(failed["status"]["reason"], "DeadlineExceeded", "{failed}");
    let main = container(&failed, "containerStatuses", "main");
    assert!(
        main["state"]["terminated"].is_object(),
        "the container was stopped: {failed}"
    );
    assert_eq!(main["restartCount"], 0, "and not restarted: {failed}");
    let took = api_seconds(&main["state"]["terminated"]["finishedAt"])
        - api_seconds(&failed["status"]["startTime"]);
    assert!(
        (3..=3 + 1 + 3).contains(&took),
        "stopped at the deadline (3 s) within the grace period (1 s): {took} s after start"
    );
}

#[test]
fn pods_that_do_not_fit_are_failed_with_the_upstream_reasons() {
    // Reserve all but 500m of the machine's CPUs: a 1-CPU request fits the capacity but not
    // what is allocatable.
    let cpus = common::machine::online_cpus();
    let reserved = cpus * 1000 - 500;
    let node = Node::start_with(
        "admit",
        &format!("maxPods: 2\nsystemReserved:\n  cpu: {reserved}m\n"),
    );
    let pod = |name: &str, cpu: &str, host_port: Option<u16>| {
        let ports = host_port.map_or(String::new(), |port| {
            format!("    ports:\n    - {{containerPort: 80, hostPort: {port}}}\n")
        });
        manifest(
            name,
            &format!(
                "  containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n\
                 \x20   resources:\n      requests: {{cpu: {cpu}}}\n{ports}"
            ),
        )
    };
    let rejected = |name: &str| {
        let pod = node.wait_pod(name, "Failed at admission", |p| phase(p) == "Failed");
        pod["status"]["reason"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    node.write("fits.yaml", &pod("fits", "100m", Some(18_081)));
    node.wait_pod("fits", "Running", |p| phase(p) == "Running");
    node.write("greedy.yaml", &pod("greedy", "1", None));
    assert_eq!(rejected("greedy"), "OutOfcpu");
    node.write("clash.yaml", &pod("clash", "10m", Some(18_081)));
    assert_eq!(rejected("clash"), "HostPortConflict");
    node.write("second.yaml", &pod("second", "10m", None));
    node.wait_pod("second", "Running", |p| phase(p) == "Running");
    node.write("third.yaml", &pod("third", "10m", None));
    assert_eq!(rejected("third"), "OutOfpods");
}

#[test]
fn pods_the_node_cannot_be_are_failed_with_the_upstream_reasons() {
    let node = Node::start_with("node-checks", "allowedUnsafeSysctls: [kernel.msg*]\n");
    let pod = |name: &str, spec_extra: &str, command: &str| {
        manifest(
            name,
            &format!(
                "{spec_extra}  containers:\n  - name: main\n    image: {SHELL}\n    command: [sh, -c, '{command}']\n"
            ),
        )
    };
    let failed = |name: &str| {
        let pod = node.wait_pod(name, "Failed at admission", |p| phase(p) == "Failed");
        let field = |f: &str| pod["status"][f].as_str().unwrap_or_default().to_owned();
        (field("reason"), field("message"))
    };
    node.write(
        "allowed.yaml",
        &pod(
            "allowed",
            "  restartPolicy: Never\n  securityContext:\n    sysctls:\n    - {name: kernel.msgmax, value: \"12345\"}\n",
            "cat /proc/sys/kernel/msgmax > /dev/termination-log",
        ),
    );
    node.write(
        "forbidden.yaml",
        &pod(
            "forbidden",
            "  securityContext:\n    sysctls:\n    - {name: net.core.somaxconn, value: \"1024\"}\n",
            "sleep 3600",
        ),
    );
    node.write(
        "windows.yaml",
        &pod("windows", "  os: {name: windows}\n", "sleep 3600"),
    );
    node.write(
        "strict.yaml",
        &pod(
            "strict",
            "  restartPolicy: Never\n  securityContext:\n    supplementalGroupsPolicy: Strict\n    supplementalGroups: [4000]\n",
            "id -G > /dev/termination-log",
        ),
    );
    assert_eq!(
        failed("forbidden"),
        (
            "SysctlForbidden".to_owned(),
            "forbidden sysctl: \"net.core.somaxconn\" not allowlisted".to_owned()
        )
    );
    assert_eq!(failed("windows").0, "PodOSNotSupported");
    let (_, metrics) = node.agent.get("/metrics");
    for reason in ["SysctlForbidden", "PodOSNotSupported"] {
        assert!(
            metrics.contains(&format!(
                "kubelet_admission_rejections_total{{reason=\"{reason}\"}} 1"
            )),
            "{reason} counted once: {metrics}"
        );
    }
    if Runtime::connect().applies_strict_groups() {
        let strict = node.wait_pod("strict", "Succeeded", |p| phase(p) == "Succeeded");
        let main = container(&strict, "containerStatuses", "main");
        assert_eq!(
            main["state"]["terminated"]["message"]
                .as_str()
                .map(str::trim),
            Some("0 4000"),
            "only the pod's groups, none from the image's /etc/group: {strict}"
        );
    } else {
        assert_eq!(
            failed("strict"),
            (
                "SupplementalGroupsPolicyNotSupported".to_owned(),
                "SupplementalGroupsPolicy=Strict is not supported in this node".to_owned()
            ),
            "a runtime that does not apply Strict groups gets no Strict pod"
        );
    }
    let allowed = node.wait_pod("allowed", "Succeeded", |p| phase(p) == "Succeeded");
    let main = container(&allowed, "containerStatuses", "main");
    assert_eq!(
        main["state"]["terminated"]["message"]
            .as_str()
            .map(str::trim),
        Some("12345"),
        "the allowed unsafe sysctl is set in the pod: {allowed}"
    );
}

#[test]
fn volumes_are_handed_to_the_fs_group_a_non_root_user_runs_with() {
    let node = Node::start("fsgroup");
    // Each check its own exit code, so a failure says which one.
    let script = "id -G | grep -qw 2000 || exit 11; \
                  touch /cache/new && test \"$(stat -c %g /cache/new)\" = 2000 || exit 12; \
                  test \"$(stat -c %g /cache)\" = 2000 || exit 13; \
                  grep -q fsgroup /info/name || exit 14; \
                  test \"$(stat -c %a /scratch)\" = 3777 || exit 15";
    let spec = format!(
        "  restartPolicy: Never\n  securityContext:\n    runAsUser: 1000\n    fsGroup: 2000\n\
         \x20 containers:\n  - name: main\n    image: {SHELL}\n    command: [sh, -c, '{script}']\n\
         \x20   volumeMounts:\n    - {{name: cache, mountPath: /cache}}\n    - {{name: info, mountPath: /info}}\n\
         \x20   - {{name: memory, mountPath: /scratch, subPath: missing}}\n\
         \x20 volumes:\n  - name: cache\n    emptyDir: {{}}\n  - name: memory\n    emptyDir: {{medium: Memory}}\n\
         \x20 - name: info\n    downwardAPI:\n      defaultMode: 256\n\
         \x20     items:\n      - {{path: name, fieldRef: {{fieldPath: metadata.name}}}}\n"
    );
    node.write("fsgroup.yaml", &manifest("fsgroup", &spec));
    let pod = node.wait_pod("fsgroup", "finished", |p| {
        phase(p) == "Succeeded" || phase(p) == "Failed"
    });
    let main = container(&pod, "containerStatuses", "main");
    assert_eq!(
        main["state"]["terminated"]["exitCode"], 0,
        "11: fsGroup not among the groups; 12: a new file not group-owned; 13: the emptyDir \
         not group-owned; 14: the downwardAPI file of mode 0400 unreadable; 15: a missing \
         subPath of a memory emptyDir not made as its root (sticky 1777, setgid for the fsGroup, \
         as upstream): {pod}"
    );
}

/// An API time (RFC 3339, whole seconds) as seconds since the epoch.
fn api_seconds(time: &Value) -> i64 {
    serde_json::from_value::<Time>(time.clone())
        .expect("an API time")
        .0
        .as_second()
}
