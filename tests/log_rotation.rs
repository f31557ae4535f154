//! Container log rotation on the real containerd: a static pod that logs without pause has its
//! log rotated once `containerLogMaxSize` (lowered live) is reached, keeps at most
//! `containerLogMaxFiles` files, finds its older rotations gzipped, and goes on writing to the
//! reopened log.
//!
//! Needs the private containerd `tests/run.sh` starts (SERGEANT_CRI_ENDPOINT) and its local
//! registry with the test images.

mod common;

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::node::{manifest, phase, Node, SHELL};
use common::{tree_node, wait_for};
use flate2::read::GzDecoder;

const MAX_FILES: usize = 3;
const ROTATION_DEADLINE: Duration = Duration::from_secs(60);

/// The container's log directory as it is at one moment.
struct Snapshot {
    /// Every file name, sorted.
    names: Vec<String>,
}

impl Snapshot {
    fn take(dir: &Path) -> Self {
        let mut names: Vec<String> = fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        Self { names }
    }

    /// The rotated files, oldest first (their timestamps sort by name).
    fn rotated(&self) -> Vec<&str> {
        self.names
            .iter()
            .map(String::as_str)
            .filter(|n| n.starts_with("0.log."))
            .collect()
    }

    /// Whether a compression is half done (its temporary file, or the plain file beside its
    /// finished archive); the order of the rotated files is checked only outside these moments.
    fn settled(&self) -> bool {
        !self
            .names
            .iter()
            .any(|n| n.ends_with(".tmp") || self.names.contains(&format!("{n}.gz")))
    }

    /// Checks what must hold at every moment, panicking with the listing otherwise.
    fn check(&self) {
        assert!(
            self.names.len() <= MAX_FILES,
            "more than containerLogMaxFiles ({MAX_FILES}) files: {:?}",
            self.names
        );
        if !self.settled() {
            return;
        }
        if let Some((newest, older)) = self.rotated().split_last() {
            assert!(
                !newest.ends_with(".gz"),
                "the newest rotated file stays plain: {:?}",
                self.names
            );
            assert!(
                older.iter().all(|n| n.ends_with(".gz")),
                "every older rotated file is gzipped: {:?}",
                self.names
            );
        }
    }
}

/// The numbers of the `line N` lines in a CRI log text.
fn line_numbers(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|line| line.split("line ").nth(1)?.split(' ').next()?.parse().ok())
        .collect()
}

/// The text of a rotated file; `None` if it was rotated away meanwhile. Panics on a file that is
/// not valid gzip.
fn read_rotated(path: &Path) -> Option<String> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return None,
        Err(err) => panic!("{}: {err}", path.display()),
    };
    let mut text = String::new();
    let read = if path.extension().is_some_and(|e| e == "gz") {
        GzDecoder::new(file).read_to_string(&mut text)
    } else {
        file.read_to_string(&mut text)
    };
    read.unwrap_or_else(|err| panic!("{} is not readable: {err}", path.display()));
    Some(text)
}

/// The directory the runtime writes the container `name` of `pod` to, under `root`.
fn log_dir(root: &Path, pod: &serde_json::Value, name: &str) -> PathBuf {
    let meta = &pod["metadata"];
    let field = |key: &str| meta[key].as_str().unwrap_or_default().to_owned();
    root.join(format!(
        "{}_{}_{}",
        field("namespace"),
        field("name"),
        field("uid")
    ))
    .join(name)
}

#[test]
fn a_chatty_container_has_its_log_rotated_compressed_and_reopened() {
    // The test's own log root, declared before the node so it outlives the pod.
    let logs = tempfile::tempdir().expect("a log root");
    let node = Node::start_with(
        "logs",
        &format!(
            "containerLogMaxFiles: {MAX_FILES}\ncontainerLogMonitorInterval: 3s\npodLogsDir: {}\n",
            logs.path().display()
        ),
    );
    // About 2 KiB a second with the runtime's line prefix: a 4 KiB log fills in a few seconds.
    let padding = "x".repeat(60);
    let spec = format!(
        "  containers:\n  - name: talker\n    image: {SHELL}\n    command: [sh, -c, 'i=0; while true; do echo \"line $i {padding}\"; i=$((i+1)); sleep 0.05; done']\n"
    );
    node.write("talker.yaml", &manifest("talker", &spec));
    let pod = node.wait_pod("talker", "Running", |p| phase(p) == "Running");
    let dir = log_dir(logs.path(), &pod, "talker");
    let current = dir.join("0.log");
    wait_for("the log to pass 4 KiB", ROTATION_DEADLINE, || {
        let size = fs::metadata(&current).map_or(0, |m| m.len());
        (size > 4096).then_some(())
    });
    assert!(
        Snapshot::take(&dir).rotated().is_empty(),
        "nothing is rotated below the default 10Mi: {:?}",
        Snapshot::take(&dir).names
    );

    // Lowered live: the next passes rotate.
    let config = fs::read_to_string(&node.agent.config_path).expect("config read");
    let lowered = config.replace(
        "containerLogMonitorInterval: 3s\n",
        "containerLogMonitorInterval: 3s\ncontainerLogMaxSize: 4Ki\n",
    );
    assert_ne!(lowered, config, "the test's own setting is in the file");
    fs::write(&node.agent.config_path, lowered).expect("config edited");

    // Two rotations: one compressed older file beside the plain newest.
    let (older, newest) = wait_for("two rotations", ROTATION_DEADLINE, || {
        let snapshot = Snapshot::take(&dir);
        snapshot.check();
        let rotated = snapshot.rotated();
        let (newest, older) = rotated.split_last()?;
        let gzipped: Vec<PathBuf> = older
            .iter()
            .filter(|n| n.ends_with(".gz"))
            .map(|n| dir.join(n))
            .collect();
        (snapshot.settled() && !gzipped.is_empty()).then(|| (gzipped, dir.join(newest)))
    });
    for file in older {
        if let Some(text) = read_rotated(&file) {
            assert!(
                !line_numbers(&text).is_empty(),
                "{} holds the container's lines: {text:?}",
                file.display()
            );
        }
    }

    // The runtime reopened the log: lines written after the rotation land in a new 0.log.
    let last_rotated = read_rotated(&newest)
        .and_then(|text| line_numbers(&text).last().copied())
        .unwrap_or(0);
    wait_for(
        "lines after the rotation in the reopened log",
        ROTATION_DEADLINE,
        || {
            Snapshot::take(&dir).check();
            let text = fs::read_to_string(&current).ok()?;
            line_numbers(&text)
                .first()
                .is_some_and(|first| *first > last_rotated)
                .then_some(())
        },
    );
    // And it goes on: the directory keeps its shape over further rotations.
    let newest = newest.file_name().map(|n| n.to_string_lossy().into_owned());
    wait_for("a further rotation", ROTATION_DEADLINE, || {
        let snapshot = Snapshot::take(&dir);
        snapshot.check();
        let latest = snapshot
            .rotated()
            .last()?
            .trim_end_matches(".gz")
            .to_owned();
        (Some(latest) > newest).then_some(())
    });

    // The file is renamed before the runtime reopens the log, and the rotation is counted
    // after the reopen: the third rotation's file can show before its count does.
    let metrics = wait_for("three rotations counted", ROTATION_DEADLINE, || {
        let (_, metrics) = node.agent.get("/metrics");
        let rotations = metrics
            .lines()
            .find_map(|l| l.strip_prefix("sergeant_container_log_rotations_total "))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .unwrap_or(0.0);
        (rotations >= 3.0).then_some(metrics)
    });
    assert!(
        !metrics.contains("sergeant_container_log_rotation_failures_total{"),
        "{metrics}"
    );
    let tree = node.agent.get_json("/debug/supervision");
    assert_eq!(
        tree_node(&tree, "root/node/container-log-manager")["restarts"],
        0,
        "{tree}"
    );
}

#[cfg(feature = "failpoints")]
#[test]
fn a_panic_in_the_log_manager_restarts_it_alone() {
    use common::{Agent, TestConfig};

    let agent = Agent::start(
        &TestConfig::new(),
        &[(
            "FAILPOINTS",
            "container-log-manager::tick=1*panic(injected log manager crash)",
        )],
    );
    let tree = wait_for("the log manager's restart", Duration::from_secs(10), || {
        let tree = agent.get_json("/debug/supervision");
        (tree_node(&tree, "root/node/container-log-manager")["restarts"] == 1).then_some(tree)
    });
    let manager = tree_node(&tree, "root/node/container-log-manager");
    let failure = manager["last_failure"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(failure.contains("injected log manager crash"), "{tree}");
    for untouched in ["root/node", "root/node/gc", "root/runtime/pleg"] {
        assert_eq!(
            tree_node(&tree, untouched)["restarts"],
            0,
            "{untouched}: {tree}"
        );
    }
}
