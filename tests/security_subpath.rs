//! subPath mounts cannot leave their volume (issue 13, finding 1): static pods on the real
//! containerd whose containers plant symbolic links to the host's `/`, to `..` and chains of
//! them in an emptyDir, flip one while containers start, or name absolute and `..` subPaths —
//! and the positive cases that must keep working: a directory inside an emptyDir, a
//! configMap-style key (`key -> ..data/key`, here on a hostPath), a missing subPath created,
//! a read-only one. The node's bind mounts under `volume-subpaths/` go with the pod.
//!
//! Needs the private containerd `tests/run.sh` starts (SERGEANT_CRI_ENDPOINT) and its local
//! registry with the test images.

mod common;

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::node::{container, manifest, phase, Node, POD_DEADLINE, SHELL};
use common::wait_for;
use nix::sys::signal::Signal;
use serde_json::Value;

/// A directory of the host under `/tmp`, unique to one test, with a `marker` file that no
/// container may see. Removed when dropped.
struct HostDir {
    path: PathBuf,
}

impl HostDir {
    fn new(tag: &str) -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path = PathBuf::from(format!(
            "/tmp/sergeant-subpath-{tag}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir(&path).expect("a host dir");
        std::fs::write(path.join("marker"), "host").expect("the marker");
        Self { path }
    }

    /// The path as seen from a container that got the host's `/` mounted at `/mnt`.
    fn through_root(&self, name: &str) -> String {
        format!("/mnt{}/{name}", self.path.display())
    }

    /// Files a container created here: an escape.
    fn created(&self) -> Vec<String> {
        std::fs::read_dir(&self.path)
            .expect("the host dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name != "marker" && name != "cfg")
            .collect()
    }
}

impl Drop for HostDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// The pod's directory under the agent's root directory.
fn pod_dir(node: &Node, pod: &Value) -> PathBuf {
    let uid = pod["metadata"]["uid"].as_str().expect("a uid");
    node.agent.dir.path().join("root/pods").join(uid)
}

/// The host directory of the pod's emptyDir `name`.
fn empty_dir(pod_dir: &Path, name: &str) -> PathBuf {
    pod_dir.join("volumes/kubernetes.io~empty-dir").join(name)
}

/// The mounts at or below `dir` in this (the node's) mount namespace, with their per-mount
/// options.
fn mounts_under(dir: &Path) -> Vec<(PathBuf, String)> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .expect("mountinfo")
        .lines()
        .filter_map(|line| {
            let mut fields = line.split(' ').skip(4);
            let point = PathBuf::from(fields.next()?);
            let options = fields.next()?.to_owned();
            point.starts_with(dir).then_some((point, options))
        })
        .collect()
}

/// The waiting reason and message of container `name`.
fn waiting<'a>(pod: &'a Value, name: &str) -> (&'a str, &'a str) {
    let state = &container(pod, "containerStatuses", name)["state"]["waiting"];
    (
        state["reason"].as_str().unwrap_or_default(),
        state["message"].as_str().unwrap_or_default(),
    )
}

fn running(pod: &Value, name: &str) -> bool {
    container(pod, "containerStatuses", name)["state"]["running"].is_object()
}

/// Waits until container `name` of pod `pod` waits with CreateContainerConfigError, or until
/// `escaped` sees an escape (on a node without the fix); returns the pod.
fn wait_refused(node: &Node, pod: &str, name: &str, escaped: impl Fn() -> bool) -> Value {
    wait_for(&format!("{pod}/{name} to be refused"), POD_DEADLINE, || {
        let seen = node.pod(pod)?;
        let refused = waiting(&seen, name).0 == "CreateContainerConfigError";
        (refused || escaped()).then_some(seen)
    })
}

#[test]
fn a_link_to_the_host_root_is_refused_and_the_rest_of_the_pod_runs() {
    let node = Node::start("subpath-root");
    let host = HostDir::new("root");
    let spec = format!(
        r"  initContainers:
  - name: plant
    image: {SHELL}
    command: [sh, -c, 'ln -s / /data/esc']
    volumeMounts:
    - {{name: data, mountPath: /data}}
  containers:
  - name: app
    image: {SHELL}
    command: [sh, -c, 'ls /mnt > /out/listing; cat {marker} > /out/seen; touch {created}; sleep 3600']
    volumeMounts:
    - {{name: data, mountPath: /mnt, subPath: esc}}
    - {{name: out, mountPath: /out}}
  - name: other
    image: {SHELL}
    command: [sleep, '3600']
    volumeMounts:
    - {{name: data, mountPath: /data}}
  volumes:
  - {{name: data, emptyDir: {{}}}}
  - {{name: out, emptyDir: {{}}}}
",
        marker = host.through_root("marker"),
        created = host.through_root("created"),
    );
    node.write("root.yaml", &manifest("root", &spec));
    let pod = wait_refused(&node, "root", "app", || !host.created().is_empty());
    assert!(
        host.created().is_empty(),
        "the container created {:?} on the host",
        host.created()
    );
    let out = empty_dir(&pod_dir(&node, &pod), "out");
    assert!(!out.join("listing").exists(), "the container ran: {pod}");
    let (reason, message) = waiting(&pod, "app");
    assert_eq!(reason, "CreateContainerConfigError", "{pod}");
    assert!(
        message.contains("spec.containers[0].volumeMounts[0].subPath: \"esc\" leads out of volume \"data\" through a symbolic link"),
        "{message}"
    );
    // The rest of the pod is not disturbed.
    let pod = node.wait_pod("root", "the other container running", |p| {
        running(p, "other")
    });
    assert_eq!(waiting(&pod, "app").0, "CreateContainerConfigError");
    assert!(
        mounts_under(&pod_dir(&node, &pod).join("volume-subpaths")).is_empty(),
        "nothing is left mounted for the refused subPath"
    );
}

#[test]
fn links_to_the_parent_and_chains_leading_out_are_refused() {
    let node = Node::start("subpath-up");
    let host = HostDir::new("up");
    let spec = format!(
        r"  initContainers:
  - name: plant
    image: {SHELL}
    command: [sh, -c, 'ln -s .. /data/up && mkdir /data/sub && ln -s l2 /data/l1 && ln -s sub/l3 /data/l2 && ln -s ../../../../../../../.. /data/sub/l3']
    volumeMounts:
    - {{name: data, mountPath: /data}}
  containers:
  - name: up
    image: {SHELL}
    command: [sh, -c, 'touch /mnt/escaped-up; sleep 3600']
    volumeMounts:
    - {{name: data, mountPath: /mnt, subPath: up}}
  - name: chain
    image: {SHELL}
    command: [sh, -c, 'touch {created}; sleep 3600']
    volumeMounts:
    - {{name: data, mountPath: /mnt, subPath: l1}}
  volumes:
  - {{name: data, emptyDir: {{}}}}
",
        created = host.through_root("created-chain"),
    );
    node.write("up.yaml", &manifest("up", &spec));
    let pod = node.wait_pod("up", "the init container done", |p| {
        container(p, "initContainerStatuses", "plant")["state"]["terminated"]["exitCode"] == 0
    });
    let plugin_dir = pod_dir(&node, &pod).join("volumes/kubernetes.io~empty-dir");
    let escaped = || plugin_dir.join("escaped-up").exists() || !host.created().is_empty();
    let pod = wait_refused(&node, "up", "up", escaped);
    let pod = match waiting(&pod, "chain").0 {
        "CreateContainerConfigError" => pod,
        _ => wait_refused(&node, "up", "chain", escaped),
    };
    assert!(
        !plugin_dir.join("escaped-up").exists(),
        "a container wrote into the pod's volume directory"
    );
    assert!(host.created().is_empty(), "{:?}", host.created());
    for (index, name, sub_path) in [(0, "up", "up"), (1, "chain", "l1")] {
        let (reason, message) = waiting(&pod, name);
        assert_eq!(reason, "CreateContainerConfigError", "{pod}");
        assert!(
            message.contains(&format!(
                "spec.containers[{index}].volumeMounts[0].subPath: \"{sub_path}\" leads out of volume \"data\""
            )),
            "{message}"
        );
    }
    // A `..` written in the subPath itself never gets this far: the pod is refused at its
    // source (tests/security_manifests.rs).
}

#[test]
fn sub_path_exprs_that_expand_out_of_their_volume_are_refused_naming_their_field() {
    // An absolute or `..` subPath written in the spec is refused with the whole pod at its
    // source (tests/security_manifests.rs); a subPathExpr is only known once expanded, here.
    let node = Node::start("subpath-rules");
    let spec = format!(
        r"  containers:
  - name: expr
    image: {SHELL}
    command: [sleep, '3600']
    env:
    - {{name: UP, value: '..'}}
    volumeMounts:
    - {{name: data, mountPath: /data}}
    - {{name: data, mountPath: /mnt, subPathExpr: '$(UP)'}}
  - name: fine
    image: {SHELL}
    command: [sleep, '3600']
    volumeMounts:
    - {{name: data, mountPath: /mnt, subPath: ./logs/$(UP)}}
  volumes:
  - {{name: data, emptyDir: {{}}}}
"
    );
    node.write("rules.yaml", &manifest("rules", &spec));
    let pod = node.wait_pod("rules", "one refused, one running", |p| {
        running(p, "fine") && waiting(p, "expr").0 == "CreateContainerConfigError"
    });
    let message = waiting(&pod, "expr").1;
    assert!(
        message.contains(
            "spec.containers[0].volumeMounts[1].subPathExpr: \"..\" has a '..' component"
        ),
        "{message}"
    );
    // `subPath` is not expanded (only `subPathExpr` is): the directory is named as written.
    let data = empty_dir(&pod_dir(&node, &pod), "data");
    assert!(data.join("logs/$(UP)").is_dir(), "{pod}");
}

#[test]
fn sub_paths_inside_their_volume_work_and_are_bound_by_the_node() {
    let node = Node::start("subpath-ok");
    let host = HostDir::new("ok");
    // A configMap volume's layout, on a hostPath: key -> ..data/key, ..data -> ..<version>.
    let cfg = host.path.join("cfg");
    std::fs::create_dir_all(cfg.join("..2024_01_01_00_00_00.000000001")).expect("cfg");
    std::fs::write(
        cfg.join("..2024_01_01_00_00_00.000000001/app.conf"),
        "configured\n",
    )
    .expect("the key");
    symlink("..2024_01_01_00_00_00.000000001", cfg.join("..data")).expect("..data");
    symlink("..data/app.conf", cfg.join("app.conf")).expect("the key link");
    let spec = format!(
        r"  initContainers:
  - name: prepare
    image: {SHELL}
    command: [sh, -c, 'mkdir -p /data/sub/dir && echo inside > /data/sub/dir/file']
    volumeMounts:
    - {{name: data, mountPath: /data}}
  containers:
  - name: app
    image: {SHELL}
    command:
    - sh
    - -c
    - |
      cat /sub/file > /out/sub
      cat /etc/app.conf > /out/conf
      echo new > /new/f && echo ok > /out/new
      if echo x > /ro/f; then echo writable > /out/ro; else echo refused > /out/ro; fi
      exec sleep 3600
    volumeMounts:
    - {{name: data, mountPath: /sub, subPath: sub/dir}}
    - {{name: cfg, mountPath: /etc/app.conf, subPath: app.conf, readOnly: true}}
    - {{name: data, mountPath: /new, subPath: new/deeper}}
    - {{name: data, mountPath: /ro, subPath: sub/dir, readOnly: true}}
    - {{name: out, mountPath: /out}}
  volumes:
  - {{name: data, emptyDir: {{}}}}
  - {{name: out, emptyDir: {{}}}}
  - name: cfg
    hostPath: {{path: {cfg}, type: Directory}}
",
        cfg = cfg.display()
    );
    node.write("ok.yaml", &manifest("ok", &spec));
    let pod = node.wait_pod("ok", "Running", |p| phase(p) == "Running");
    let dir = pod_dir(&node, &pod);
    let out = empty_dir(&dir, "out");
    let read = |name: &str| {
        wait_for(&format!("/out/{name}"), POD_DEADLINE, || {
            std::fs::read_to_string(out.join(name))
                .ok()
                .filter(|text| text.ends_with('\n'))
        })
    };
    assert_eq!(read("sub"), "inside\n");
    assert_eq!(read("conf"), "configured\n");
    assert_eq!(read("new"), "ok\n");
    assert_eq!(read("ro"), "refused\n");
    // The missing subPath was made a directory with the emptyDir's permissions.
    let data = empty_dir(&dir, "data");
    for made in ["new", "new/deeper"] {
        let meta = std::fs::symlink_metadata(data.join(made)).expect(made);
        assert!(meta.is_dir(), "{made}");
        assert_eq!(meta.permissions().mode() & 0o777, 0o777, "{made}");
    }
    assert_eq!(
        std::fs::read_to_string(data.join("new/deeper/f")).expect("written through the subPath"),
        "new\n"
    );
    assert!(
        !data.join("sub/dir/f").exists(),
        "the read-only mount let a write through"
    );
    // The runtime mounted the node's bind mounts, read-only where the mount is.
    let mut bound = mounts_under(&dir.join("volume-subpaths"));
    bound.sort();
    let expected = [
        ("cfg/app/1", true),
        ("data/app/0", false),
        ("data/app/2", false),
        ("data/app/3", true),
    ];
    assert_eq!(bound.len(), expected.len(), "{bound:?}");
    for ((point, options), (name, read_only)) in bound.iter().zip(expected) {
        assert_eq!(point, &dir.join("volume-subpaths").join(name));
        assert_eq!(
            options.split(',').next() == Some("ro"),
            read_only,
            "{name}: {options}"
        );
    }
}

#[test]
fn a_flipped_link_never_shows_the_host_across_many_starts() {
    const CONTAINERS: usize = 8;
    const STARTS: usize = 24;
    let node = Node::start("subpath-race");
    let host = HostDir::new("race");
    let app = |i: usize| {
        format!(
            r"  - name: app{i}
    image: {SHELL}
    command: [sh, -c, 'if [ -e /mnt/inside ]; then echo in >> /out/log; else echo out >> /out/log; fi; touch {created}']
    volumeMounts:
    - {{name: data, mountPath: /mnt, subPath: esc}}
    - {{name: out, mountPath: /out}}
",
            created = host.through_root(&format!("created-{i}")),
        )
    };
    let spec = format!(
        r"  initContainers:
  - name: wait
    image: {SHELL}
    command: [sh, -c, 'until [ -e /data/go ]; do sleep 0.05; done']
    volumeMounts:
    - {{name: data, mountPath: /data}}
  containers:
{}  volumes:
  - {{name: data, emptyDir: {{}}}}
  - {{name: out, emptyDir: {{}}}}
",
        (0..CONTAINERS).map(app).collect::<String>()
    );
    node.write("race.yaml", &manifest("race", &spec));
    let pod = node.wait_pod("race", "its init container running", |p| {
        container(p, "initContainerStatuses", "wait")["state"]["running"].is_object()
    });
    let data = empty_dir(&pod_dir(&node, &pod), "data");
    let log = empty_dir(&pod_dir(&node, &pod), "out").join("log");
    std::fs::create_dir(data.join("safe")).expect("safe dir");
    std::fs::write(data.join("safe/inside"), "").expect("inside");
    symlink("safe", data.join("esc")).expect("esc");
    // The host flips `esc` between the safe directory and `/`, atomically (a rename), as
    // fast as it can with a breath between flips, while the app containers start again and
    // again (they exit at once; restartPolicy Always).
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let (data, stop) = (data.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut flips = 0u64;
            while !stop.load(Ordering::Relaxed) {
                for target in ["/", "safe"] {
                    let tmp = data.join("esc.tmp");
                    let _ = std::fs::remove_file(&tmp);
                    symlink(target, &tmp).expect("a new link");
                    std::fs::rename(&tmp, data.join("esc")).expect("the link swapped");
                    flips += 1;
                    std::thread::sleep(Duration::from_micros(200));
                }
            }
            flips
        })
    };
    std::fs::write(data.join("go"), "").expect("go");
    let lines = || -> Vec<String> {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    };
    let seen = wait_for(
        &format!("{STARTS} starts of the app containers"),
        Duration::from_secs(180),
        || {
            let seen = lines();
            let escaped = seen.iter().any(|l| l != "in") || !host.created().is_empty();
            (escaped || seen.len() >= STARTS).then_some(seen)
        },
    );
    stop.store(true, Ordering::Relaxed);
    let flips = flipper.join().expect("the flipper");
    assert!(
        host.created().is_empty(),
        "containers created {:?} on the host",
        host.created()
    );
    let outside = seen.iter().filter(|l| *l != "in").count();
    assert_eq!(
        outside,
        0,
        "{outside} of {} starts saw outside the volume",
        seen.len()
    );
    assert!(flips > 1000, "only {flips} flips");
    eprintln!("{} starts, all inside, during {flips} flips", seen.len());
}

#[test]
fn sub_path_mounts_go_with_the_pod_also_after_a_kill_dash_nine() {
    let mut node = Node::start("subpath-gone");
    let spec = format!(
        r"  containers:
  - name: app
    image: {SHELL}
    command: [sleep, '3600']
    volumeMounts:
    - {{name: data, mountPath: /a, subPath: a}}
    - {{name: mem, mountPath: /b, subPath: b, readOnly: true}}
  volumes:
  - {{name: data, emptyDir: {{}}}}
  - {{name: mem, emptyDir: {{medium: Memory}}}}
"
    );
    let bound_then_gone = |node: &mut Node, name: &str, kill: bool| {
        node.write(&format!("{name}.yaml"), &manifest(name, &spec));
        let pod = node.wait_pod(name, "Running", |p| phase(p) == "Running");
        let dir = pod_dir(node, &pod);
        let bound = mounts_under(&dir.join("volume-subpaths"));
        assert_eq!(bound.len(), 2, "{bound:?}");
        if kill {
            node.agent.signal(Signal::SIGKILL);
            node.agent.wait_exit(Duration::from_secs(10));
            node.remove(&format!("{name}.yaml"));
            node.agent.restart_in_place();
        } else {
            node.remove(&format!("{name}.yaml"));
        }
        wait_for(
            &format!("{name}: its directory removed"),
            POD_DEADLINE,
            || (node.pod(name).is_none() && !dir.exists()).then_some(()),
        );
        assert_eq!(mounts_under(&dir), [], "nothing of the pod stays mounted");
    };
    bound_then_gone(&mut node, "removed", false);
    // Removed while sergeant was down: the restarted agent finds the pod in the runtime and
    // tears it down, its subPath mounts included.
    bound_then_gone(&mut node, "orphaned", true);
}
