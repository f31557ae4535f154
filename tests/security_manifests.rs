//! Hostile static pod manifests on the real containerd (security issue 13, findings 3 to 5):
//! a file nested 200 000 levels deep and an oversized file are refused at once with their
//! reasons while other manifests come and go, and pods upstream would refuse (negative limits,
//! 600 000 labels, a bad label, bad quantities and subPaths) never reach the runtime, while a
//! good pod beside them runs.

mod common;

use std::time::Duration;

use common::node::{manifest, phase, Node, POD_DEADLINE, SHELL};
use common::runtime::Runtime;
use common::wait_for;
use serde_json::Value;

/// How long the source may take to see a manifest written or removed: it rescans every
/// second and follows inotify, so this is the scan plus a generous margin for a loaded run.
const SEEN: Duration = Duration::from_secs(10);

/// The pods and rejections the file source publishes.
fn file_source(node: &Node) -> Value {
    node.agent.get_json("/debug/sources")["file"].clone()
}

/// The error the file source publishes for the manifest file `file`, once it has one.
fn rejection(node: &Node, file: &str) -> Option<String> {
    file_source(node)["rejected"]
        .as_array()?
        .iter()
        .find(|r| r["origin"].as_str().is_some_and(|o| o.ends_with(file)))
        .and_then(|r| r["error"].as_str().map(str::to_owned))
}

/// Whether the file source publishes the pod `name` of node `tag`.
fn published(node: &Node, name: &str, tag: &str) -> bool {
    let full = format!("default/{name}-node-{tag}");
    file_source(node)["pods"]
        .as_array()
        .is_some_and(|pods| pods.iter().any(|p| p == full.as_str()))
}

fn sleeper(name: &str) -> String {
    manifest(
        name,
        &format!(
            "  containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n"
        ),
    )
}

/// A manifest of nested flow lists, 200 000 deep (400 KB), as in the finding: it kept the
/// source busy for minutes, and no other manifest was seen meanwhile.
fn deep(variant: usize) -> String {
    let depth = 200_000;
    format!(
        "# variant {variant}\napiVersion: v1\nkind: Pod\nspec: {}{}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    )
}

#[test]
fn hostile_manifests_do_not_hold_up_the_others() {
    let tag = "hostile";
    let node = Node::start(tag);
    node.write("deep.yaml", &deep(0));
    // A good pod padded past the size cap (1.5 MiB) with a comment.
    let mut big = sleeper("big");
    big.push('#');
    big.push_str(&"x".repeat(2 << 20));
    big.push('\n');
    node.write("big.yaml", &big);
    let deep_error = wait_for("deep.yaml rejected", SEEN, || rejection(&node, "deep.yaml"));
    assert!(
        deep_error.ends_with("deep.yaml:4: nested more than 64 levels deep: no pod is this deep"),
        "{deep_error}"
    );
    let big_error = wait_for("big.yaml rejected", SEEN, || rejection(&node, "big.yaml"));
    assert!(
        big_error.ends_with("big.yaml:1: the file is larger than 1572864 bytes (1.5 MiB), the most a static pod manifest may have (the largest object the API server stores)"),
        "{big_error}"
    );
    for round in 0..4 {
        // The deep file changes each round, so the source reads it again every time.
        node.write("deep.yaml", &deep(round + 1));
        let name = format!("good-{round}");
        let file = format!("{name}.yaml");
        node.write(&file, &sleeper(&name));
        wait_for(&format!("{name} seen by the source"), SEEN, || {
            published(&node, &name, tag).then_some(())
        });
        node.wait_pod(&name, "Running", |p| phase(p) == "Running");
        node.remove(&file);
        wait_for(&format!("{name} dropped by the source"), SEEN, || {
            (!published(&node, &name, tag)).then_some(())
        });
        wait_for(&format!("{name} stopped and gone"), POD_DEADLINE, || {
            node.pod(&name).is_none().then_some(())
        });
    }
    assert!(rejection(&node, "deep.yaml").is_some_and(|e| e.contains("nested more than 64")));
    let log = node.agent.log();
    assert!(
        log.contains("static pod manifest rejected") && log.contains("nested more than 64 levels"),
        "the rejection is not in the log:\n{log}"
    );
}

#[test]
fn pods_upstream_would_refuse_never_reach_the_runtime() {
    let tag = "refused";
    let node = Node::start(tag);
    let negative = manifest(
        "negative",
        &format!(
            "  containers:\n  - name: main\n    image: {SHELL}\n    command: [sleep, '3600']\n    resources:\n      limits:\n        cpu: \"-1\"\n        memory: -5Mi\n"
        ),
    );
    node.write("negative.yaml", &negative);
    // 600 000 labels: once accepted, its sandbox wedged containerd's CRI for every pod after.
    let mut labels =
        String::from("apiVersion: v1\nkind: Pod\nmetadata:\n  name: labels\n  labels:\n");
    for n in 0..600_000 {
        labels.push_str(&format!("    k{n}: v\n"));
    }
    labels.push_str(
        &sleeper("labels").replace("apiVersion: v1\nkind: Pod\nmetadata:\n  name: labels\n", ""),
    );
    node.write("labels.yaml", &labels);
    // Fewer labels, within the size cap, but past the count bound.
    let mut many = String::from("apiVersion: v1\nkind: Pod\nmetadata:\n  name: many\n  labels:\n");
    for n in 0..2000 {
        many.push_str(&format!("    k{n}: v\n"));
    }
    many.push_str(
        &sleeper("many").replace("apiVersion: v1\nkind: Pod\nmetadata:\n  name: many\n", ""),
    );
    node.write("many.yaml", &many);
    let paths = manifest(
        "paths",
        &format!(
            "  containers:\n  - name: main\n    image: {SHELL}\n    resources:\n      limits:\n        cpu: lots\n        memory: 9999999999999999Ei\n    volumeMounts:\n    - name: data\n      mountPath: /a\n      subPath: ../../etc\n    - name: data\n      mountPath: /b\n      subPath: /etc\n  volumes:\n  - name: data\n    emptyDir: {{}}\n"
        ),
    );
    let paths = paths.replace(
        "  name: paths\n",
        &format!(
            "  name: paths\n  labels:\n    \"a b/c d\": {}\n",
            "v".repeat(300)
        ),
    );
    node.write("paths.yaml", &paths);
    node.write("good.yaml", &sleeper("good"));
    node.wait_pod("good", "Running", |p| phase(p) == "Running");

    let error = wait_for("negative.yaml rejected", SEEN, || {
        rejection(&node, "negative.yaml")
    });
    assert!(
        error.contains("negative.yaml:13: spec.containers[0].resources.limits.cpu: must be greater than or equal to 0")
            && error.contains("negative.yaml:14: spec.containers[0].resources.limits.memory: must be greater than or equal to 0"),
        "{error}"
    );
    let error = wait_for("labels.yaml rejected", SEEN, || {
        rejection(&node, "labels.yaml")
    });
    assert!(error.ends_with("labels.yaml:1: the file is larger than 1572864 bytes (1.5 MiB), the most a static pod manifest may have (the largest object the API server stores)"), "{error}");
    let error = wait_for("many.yaml rejected", SEEN, || rejection(&node, "many.yaml"));
    assert!(
        error.ends_with(
            "many.yaml:5: metadata.labels: 2000 labels, more than the 1024 sergeant accepts"
        ),
        "{error}"
    );
    let error = wait_for("paths.yaml rejected", SEEN, || {
        rejection(&node, "paths.yaml")
    });
    for expected in [
        "paths.yaml:6: metadata.labels.a b/c d: invalid key: the prefix of \"a b/c d\"",
        "paths.yaml:6: metadata.labels.a b/c d: invalid value: \"vvvv",
        "paths.yaml:14: spec.containers[0].resources.limits.cpu: \"lots\" is not a quantity",
        "paths.yaml:15: spec.containers[0].resources.limits.memory: \"9999999999999999Ei\" is not a quantity: it is too large",
        "paths.yaml:19: spec.containers[0].volumeMounts[0].subPath: must not contain '..'",
        "paths.yaml:22: spec.containers[0].volumeMounts[1].subPath: must be a relative path",
    ] {
        assert!(error.contains(expected), "{expected:?} missing from: {error}");
    }

    let runtime = Runtime::connect();
    for name in ["negative", "labels", "many", "paths"] {
        assert!(node.pod(name).is_none(), "{name} is listed as a pod");
        let full = format!("{name}-node-{tag}");
        let sandboxes = runtime.sandboxes(&[("io.kubernetes.pod.name", &full)]);
        assert!(
            sandboxes.is_empty(),
            "{name} reached the runtime: {sandboxes:?}"
        );
    }
    let good = runtime.sandboxes(&[("io.kubernetes.pod.name", &format!("good-node-{tag}"))]);
    assert_eq!(good.len(), 1, "the good pod's sandbox: {good:?}");
}
