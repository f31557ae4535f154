//! Image garbage collection on a real containerd whose image filesystem is a small tmpfs the
//! test mounts: the usage the collector reads is what the runtime really holds (statvfs of
//! containerd's own root), nothing is faked.
//!
//! The agent starts with image GC off (`imageGCHighThresholdPercent: 100`) and a static pod
//! running `shell`. Three unused images are pulled one after the other, each once the agent has
//! seen the one before, so their order is known: `termmsg` first, then `exit`, then `httpd`.
//! The test then reads the filesystem and rewrites the thresholds so that the current usage is
//! over the high one and reaching the low one takes the sizes of the first two images but not
//! the third; the live reload starts a pass at once. The two least recently seen images go, in
//! that order; `httpd`, the image in use and the sandbox image stay; the metric counts two for
//! `space`. A second reload asks for more than the unused images hold: the collector removes
//! `httpd` and reports `FreeDiskSpaceFailed`, and the image in use and the sandbox image still
//! stay.
//!
//! Under disk pressure on that filesystem (an `imagefs.available` threshold the space held by
//! the large `grpc-health` image relieves), the eviction manager's node-level reclaim removes
//! a gone pod's dead container, then every unused image, and evicts no pod; the condition
//! clears after the transition period.
//!
//! In managed mode, a goal the collector cannot reach is a `FreeDiskSpaceFailed` Warning about
//! the Node in the API server, and a second failed pass in a row an `ImageGCFailed` one.
//!
//! Needs root (mount, containerd), the node environment's script and its local registry with
//! the test images, and the control plane (`tests/run.sh` starts them).

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::instance::Instance;
use common::managed::Managed;
use common::node::{phase, sleeper, Node, SHELL};
use common::runtime::Runtime;
use common::{wait_for, TestConfig};
use nix::mount::{mount, umount2, MntFlags, MsFlags};
use serde_json::Value;

const PAUSE: &str = "127.0.0.1:5000/sergeant/pause:1.0";
const TERMMSG: &str = "127.0.0.1:5000/sergeant/termmsg:1.0";
const EXIT: &str = "127.0.0.1:5000/sergeant/exit:1.0";
const HTTPD: &str = "127.0.0.1:5000/sergeant/httpd:1.0";
const GRPC_HEALTH: &str = "127.0.0.1:5000/sergeant/grpc-health:1.0";
/// How long the agent may take to see a change of the runtime (its detection period is 10 s).
const SEEN: Duration = Duration::from_secs(30);

/// A private containerd whose root (content store and snapshots) is a tmpfs; stopped,
/// unmounted and removed when dropped.
struct SmallRuntime {
    /// `None` until `up` succeeds; stopped before the tmpfs is unmounted.
    instance: Option<Instance>,
    endpoint: String,
    root: PathBuf,
}

impl SmallRuntime {
    /// Instance `instance` (node-env.sh picks a free bridge index), its root a tmpfs of `mib`
    /// MiB.
    fn up(instance: &'static str, mib: u64) -> Self {
        let run_dir =
            std::env::var("SERGEANT_RUN_DIR").unwrap_or_else(|_| "/run/sergeant-node".to_owned());
        let root = Path::new(&run_dir).join(instance).join("root");
        std::fs::create_dir_all(&root).expect("the instance root directory");
        let options = format!("size={mib}m");
        mount(
            Some("tmpfs"),
            &root,
            Some("tmpfs"),
            MsFlags::empty(),
            Some(options.as_str()),
        )
        .expect("a tmpfs mounted on the instance root (needs root)");
        // From here on, dropping it unmounts the tmpfs even when `up` fails.
        let mut runtime = Self {
            instance: None,
            endpoint: String::new(),
            root,
        };
        let instance = Instance::up(instance, &[]);
        runtime.endpoint = instance.endpoint().to_owned();
        runtime.instance = Some(instance);
        runtime
    }

    /// Capacity and available bytes of the image filesystem now.
    fn disk(&self) -> (u64, u64) {
        let stats = nix::sys::statvfs::statvfs(&self.root).expect("statvfs of the tmpfs");
        let block = stats.fragment_size();
        (stats.blocks() * block, stats.blocks_available() * block)
    }
}

impl Drop for SmallRuntime {
    fn drop(&mut self) {
        drop(self.instance.take());
        let _ = umount2(&self.root, MntFlags::MNT_DETACH);
    }
}

/// The image of `runtime` named `name`: `(id, size)`.
fn image(runtime: &Runtime, name: &str) -> Option<(String, u64)> {
    runtime
        .images()
        .into_iter()
        .find(|i| i.repo_tags.iter().any(|t| t == name))
        .map(|i| (i.id, i.size))
}

/// The image collector's line in the supervision tree.
fn status(node: &Node) -> String {
    node.agent.child_status("root/node/image-gc")
}

/// The eviction manager's line in the supervision tree.
fn eviction_status(node: &Node) -> String {
    node.agent.child_status("root/node/eviction-manager")
}

/// Waits until the collector knows `count` images.
fn wait_known(node: &Node, count: usize) {
    let known = format!("; {count} images known;");
    wait_for(
        &format!("the collector to know {count} images"),
        SEEN,
        || status(node).contains(&known).then_some(()),
    );
}

/// The value of the metric line starting with `prefix` on `/metrics`.
fn metric(node: &Node, prefix: &str) -> Option<f64> {
    let (_, body) = node.agent.get("/metrics");
    body.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// Rewrites the agent's thresholds (the lines the test put in its configuration).
fn set_thresholds(node: &Node, high: u64, low: u64) {
    let path = &node.agent.config_path;
    let text = std::fs::read_to_string(path).expect("the config file");
    let kept: String = text
        .lines()
        .filter(|l| {
            !l.starts_with("imageGCHighThresholdPercent:")
                && !l.starts_with("imageGCLowThresholdPercent:")
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let edited = kept.replacen(
        "kind: KubeletConfiguration\n",
        &format!("kind: KubeletConfiguration\nimageGCHighThresholdPercent: {high}\nimageGCLowThresholdPercent: {low}\n"),
        1,
    );
    std::fs::write(path, edited).expect("config edited");
}

#[test]
fn unused_images_go_least_recently_used_first_down_to_the_low_threshold() {
    // Small, so a percent is less than half an image.
    let small = SmallRuntime::up("imagegc", 24);
    let runtime = Runtime::connect_to(&small.endpoint);
    // Image GC off until the images are in place; disk signals are left out of eviction so
    // only the collector acts on this filesystem.
    let node = Node::start_on(
        &small.endpoint,
        "imagegc",
        "imageGCHighThresholdPercent: 100\nimageGCLowThresholdPercent: 80\nimageMinimumGCAge: 0s\n\
         evictionHard:\n  memory.available: 1Mi\nlogging:\n  verbosity: 3\n",
        &[],
    );
    node.write("keeper.yaml", &sleeper("keeper"));
    node.wait_pod("keeper", "running", |p| phase(p) == "Running");
    assert!(
        status(&node).contains("image garbage collection off"),
        "{}",
        status(&node)
    );
    wait_known(&node, 2); // pause and shell
    for (n, name) in [TERMMSG, EXIT, HTTPD].iter().enumerate() {
        runtime.pull_image(name);
        wait_known(&node, 3 + n);
    }
    let sizes: Vec<u64> = [TERMMSG, EXIT, HTTPD]
        .iter()
        .map(|name| image(&runtime, name).expect("pulled").1)
        .collect();
    // Thresholds from the filesystem as it is: freeing the low threshold's bytes takes the
    // first image and half the second.
    let (capacity, available) = small.disk();
    let percent = capacity / 100;
    assert!(
        percent < sizes[1] / 2,
        "a percent of the tmpfs ({percent} bytes) must be under half the exit image ({} bytes)",
        sizes[1]
    );
    let target = u128::from(sizes[0] + sizes[1] / 2);
    let free_percent = ((target + u128::from(available)) * 100).div_ceil(u128::from(capacity));
    let low = 100 - u64::try_from(free_percent).unwrap();
    let high = low + 1;
    eprintln!(
        "tmpfs {capacity} bytes, {available} available; image sizes {sizes:?}; high {high}%, low {low}%"
    );
    set_thresholds(&node, high, low);
    let space = "kubelet_image_garbage_collected_total{reason=\"space\"}";
    wait_for("two images collected for space", SEEN, || {
        (metric(&node, space) == Some(2.0)).then_some(())
    });
    assert_eq!(
        image(&runtime, TERMMSG),
        None,
        "the least recently seen image goes first"
    );
    assert_eq!(
        image(&runtime, EXIT),
        None,
        "the second goes to reach the low threshold"
    );
    assert!(
        image(&runtime, HTTPD).is_some(),
        "the third is not needed to reach the low threshold"
    );
    assert!(image(&runtime, SHELL).is_some(), "the image in use stays");
    assert!(image(&runtime, PAUSE).is_some(), "the sandbox image stays");
    let log = node.agent.log();
    let termmsg_at = log
        .find(&format!("image={TERMMSG}"))
        .expect("termmsg removal logged");
    let exit_at = log
        .find(&format!("image={EXIT}"))
        .expect("exit removal logged");
    assert!(termmsg_at < exit_at, "termmsg was removed before exit");
    assert!(
        !log.contains("FreeDiskSpaceFailed"),
        "the goal was met: {log}"
    );

    // Asking for more than every unused image holds: httpd goes, the rest stays, and the
    // shortfall is reported.
    set_thresholds(&node, 1, 0);
    wait_for("the shortfall reported", SEEN, || {
        node.agent
            .log()
            .contains("FreeDiskSpaceFailed")
            .then_some(())
    });
    assert_eq!(metric(&node, space), Some(3.0));
    assert_eq!(image(&runtime, HTTPD), None);
    assert!(image(&runtime, SHELL).is_some(), "the image in use stays");
    assert!(image(&runtime, PAUSE).is_some(), "the sandbox image stays");
    assert_eq!(
        phase(&node.pod("keeper").expect("keeper listed")),
        "Running"
    );
}

/// Disk pressure on the image filesystem is relieved by node-level reclaim before any pod is
/// evicted: a gone pod's dead container goes, then every unused image (the image GC
/// thresholds are off, so only the eviction manager removes them). The threshold is set so
/// that the space the large `grpc-health` image really holds on the tmpfs relieves it.
#[test]
fn disk_pressure_on_the_image_filesystem_reclaims_unused_images_before_evicting() {
    let small = SmallRuntime::up("imagepressure", 96);
    let runtime = Runtime::connect_to(&small.endpoint);
    let node = Node::start_on(
        &small.endpoint,
        "imagepressure",
        "imageGCHighThresholdPercent: 100\nimageGCLowThresholdPercent: 80\nimageMinimumGCAge: 0s\n\
         evictionPressureTransitionPeriod: 15s\nevictionHard:\n  memory.available: 1Mi\n",
        &[],
    );
    node.write("keeper.yaml", &sleeper("keeper"));
    node.wait_pod("keeper", "running", |p| phase(p) == "Running");
    // A pod that ran the exit image and is gone: its dead container holds the image until
    // the container goes.
    node.write(
        "done.yaml",
        &common::node::manifest(
            "done",
            &format!("  restartPolicy: Never\n  containers:\n  - name: main\n    image: {EXIT}\n    env:\n    - {{name: EXIT_CODE, value: '0'}}\n"),
        ),
    );
    node.wait_pod("done", "succeeded", |p| phase(p) == "Succeeded");
    node.remove("done.yaml");
    wait_for("the done pod gone", SEEN, || {
        node.pod("done").is_none().then_some(())
    });
    runtime.pull_image(GRPC_HEALTH);
    runtime.pull_image(TERMMSG);
    let (_, grpc_size) = image(&runtime, GRPC_HEALTH).expect("pulled");
    let (_, available) = small.disk();
    // Met now; relieved once the grpc-health image's content and snapshot (at least its
    // size) are freed.
    let threshold = available + grpc_size / 2;
    eprintln!("available {available} bytes, grpc-health {grpc_size} bytes, threshold {threshold}");
    let path = &node.agent.config_path;
    let text = std::fs::read_to_string(path).expect("the config file");
    std::fs::write(
        path,
        text.replace(
            "evictionHard:\n  memory.available: 1Mi\n",
            &format!(
                "evictionHard:\n  memory.available: 1Mi\n  imagefs.available: \"{threshold}\"\n"
            ),
        ),
    )
    .expect("config edited");
    wait_for("DiskPressure", SEEN, || {
        eviction_status(&node)
            .contains("pressure: DiskPressure")
            .then_some(())
    });
    wait_for("the pressure relieved on the node", SEEN, || {
        node.agent
            .log()
            .contains("node-level reclaim relieved the pressure; no pod evicted")
            .then_some(())
    });
    assert_eq!(image(&runtime, GRPC_HEALTH), None, "unused images go");
    assert_eq!(image(&runtime, TERMMSG), None, "unused images go");
    assert_eq!(
        image(&runtime, EXIT),
        None,
        "the gone pod's container went, then its image"
    );
    assert!(image(&runtime, SHELL).is_some(), "the image in use stays");
    assert!(image(&runtime, PAUSE).is_some(), "the sandbox image stays");
    let log = node.agent.log();
    let containers_at = log
        .find("node-level reclaim")
        .expect("node-level reclaim logged");
    let images_at = log
        .find("node-level reclaim: unused images")
        .expect("image reclaim logged");
    assert!(
        containers_at < images_at,
        "dead containers are reclaimed before images"
    );
    assert!(!log.contains("evicting:"), "no pod evicted: {log}");
    wait_for(
        "the pressure over after the transition period",
        Duration::from_secs(60),
        || {
            eviction_status(&node)
                .contains("pressure: none")
                .then_some(())
        },
    );
    assert_eq!(
        phase(&node.pod("keeper").expect("keeper listed")),
        "Running"
    );
    assert!(small.disk().1 > threshold, "the space is really free");
}

/// The events about Node `node` with reason `reason`, as `kubectl get events` lists them.
fn node_events(node: &Managed, reason: &str) -> Vec<Value> {
    let selector = format!(
        "involvedObject.kind=Node,involvedObject.name={},reason={reason}",
        node.node
    );
    node.cluster
        .get_json(&["events", "-n", "default", "--field-selector", &selector])
        .and_then(|list| list["items"].as_array().cloned())
        .unwrap_or_default()
}

/// A goal no pass can reach (usage down to 0 %) is reported on the Node in the API server:
/// `FreeDiskSpaceFailed` at each pass, `ImageGCFailed` from the second failed pass in a row
/// (the test's reload changes the minimum age, and a changed policy starts a pass).
#[test]
fn a_goal_out_of_reach_is_a_warning_event_on_the_node() {
    let small = SmallRuntime::up("imagegcevents", 24);
    let config = TestConfig::new().kubelet(
        "imageGCHighThresholdPercent: 1\nimageGCLowThresholdPercent: 0\nimageMinimumGCAge: 0s\n\
         evictionHard:\n  memory.available: 1Mi\n",
    );
    let node = Managed::start_on(&small.endpoint, "imagegc-events", config);
    let failed = wait_for("a FreeDiskSpaceFailed event on the Node", SEEN, || {
        node_events(&node, "FreeDiskSpaceFailed").into_iter().next()
    });
    assert_eq!(failed["type"], "Warning");
    assert_eq!(failed["involvedObject"]["uid"], node.node.as_str());
    assert!(
        failed["message"]
            .as_str()
            .is_some_and(|m| m.contains("low threshold")),
        "{failed}"
    );
    let path = &node.agent.config_path;
    let text = std::fs::read_to_string(path).expect("the config file");
    std::fs::write(
        path,
        text.replace("imageMinimumGCAge: 0s\n", "imageMinimumGCAge: 1s\n"),
    )
    .expect("config edited");
    let repeated = wait_for("an ImageGCFailed event on the Node", SEEN, || {
        node_events(&node, "ImageGCFailed").into_iter().next()
    });
    assert_eq!(repeated["type"], "Warning");
    assert_eq!(repeated["source"]["host"], node.node.as_str());
}
