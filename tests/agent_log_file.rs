//! `--log-file` and `--log-file-max-size` on the real binary: the log goes to the file, which is
//! rotated at 1 MB into at most five older files, every line whole JSON, no line lost across a
//! rotation; bad flag values are refused naming the flag; `--windows-service` is refused off
//! Windows.
//!
//! Runs on the fake runtime adapter: needs no containerd.

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{binary, try_get, wait_for, Agent, TestConfig};

/// The size given to `--log-file-max-size`, in MB, and in bytes.
const MAX_MB: u64 = 1;
const MAX_BYTES: u64 = MAX_MB * 1024 * 1024;
/// The rotated files kept beside the live one.
const KEPT: usize = 5;
/// How long the agent may take to log enough to rotate past the kept files.
const DEADLINE: Duration = Duration::from_secs(240);
/// Static pod manifests rejected per batch: each rejection is logged once, naming its file.
const BATCH: usize = 20;

/// The log files, oldest first (`agent.log.5` … `agent.log.1`, `agent.log`), with contents.
fn log_files(dir: &Path) -> Vec<(String, String)> {
    let mut files: Vec<(usize, String, String)> = fs::read_dir(dir)
        .expect("log dir readable")
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let age = match name.strip_prefix("agent.log") {
                Some("") => 0,
                Some(n) => n.strip_prefix('.')?.parse().ok()?,
                None => return None,
            };
            let text = fs::read_to_string(entry.path()).unwrap_or_default();
            Some((age, name, text))
        })
        .collect();
    files.sort_by_key(|file| std::cmp::Reverse(file.0));
    files
        .into_iter()
        .map(|(_, name, text)| (name, text))
        .collect()
}

/// The marker numbers of the rejected manifests named in `text`.
fn markers(text: &str) -> impl Iterator<Item = usize> + '_ {
    text.match_indices("marker-").filter_map(|(at, _)| {
        let digits: String = text[at + 7..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    })
}

#[test]
fn the_log_file_rotates_whole_lines_into_five_older_files() {
    let logs = tempfile::tempdir().expect("log dir");
    let manifests = tempfile::tempdir().expect("manifest dir");
    let log_file = logs.path().join("agent.log");
    let config = TestConfig::new()
        .kubelet(&format!(
            "staticPodPath: {}\nlogging:\n  format: json\n",
            manifests.path().display()
        ))
        .sergeant("runtimeAdapter: fake\n");
    let log_arg = log_file.display().to_string();
    let max_arg = MAX_MB.to_string();
    // Verbosity 8 traces every crate: each HTTP request below logs a few kilobytes.
    let agent = Agent::start_with_args(
        &config,
        &[],
        &[
            "--log-file",
            &log_arg,
            "--log-file-max-size",
            &max_arg,
            "--v",
            "8",
        ],
    );
    assert!(
        !agent.log().contains("\"level\""),
        "records went to stderr instead of the file:\n{}",
        agent.log()
    );

    // Log until the oldest kept file has been dropped at least once (the file numbered KEPT
    // starts with something else than it did when first seen), writing rejected manifests in
    // batches as markers along the way.
    let healthz = format!("{}/healthz", agent.healthz);
    let mut written = 0;
    let mut oldest_start: Option<String> = None;
    wait_for("the oldest kept log file to be replaced", DEADLINE, || {
        for _ in 0..BATCH {
            let name = format!("marker-{written:05}.yaml");
            fs::write(
                manifests.path().join(name),
                "apiVersion: v1\nkind: Pod\nwibble: 1\n",
            )
            .expect("manifest written");
            written += 1;
        }
        for _ in 0..50 {
            let _ = try_get(&healthz);
        }
        let oldest = fs::read_to_string(logs.path().join(format!("agent.log.{KEPT}"))).ok()?;
        let start = oldest.lines().next()?.to_owned();
        match &oldest_start {
            None => {
                oldest_start = Some(start);
                None
            }
            Some(first) => (*first != start).then_some(()),
        }
    });
    // The last batch logged: every marker up to `written` is in the files.
    wait_for("the last markers logged", DEADLINE, || {
        let seen: BTreeSet<usize> = log_files(logs.path())
            .iter()
            .flat_map(|(_, text)| markers(text).collect::<Vec<_>>())
            .collect();
        seen.contains(&(written - 1)).then_some(())
    });

    let files = log_files(logs.path());
    let names: Vec<&str> = files.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "agent.log.5",
            "agent.log.4",
            "agent.log.3",
            "agent.log.2",
            "agent.log.1",
            "agent.log"
        ],
        "the live file and five rotated ones, no more"
    );
    let mut seen = BTreeSet::new();
    for (name, text) in &files {
        assert!(
            text.len() as u64 <= MAX_BYTES,
            "{name} has {} bytes",
            text.len()
        );
        if name != "agent.log" {
            assert!(
                text.len() as u64 > MAX_BYTES / 2,
                "{name} rotated early: {} bytes",
                text.len()
            );
        }
        assert!(
            text.is_empty() || text.ends_with('\n'),
            "{name} ends inside a line"
        );
        for line in text.lines() {
            let record: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|err| {
                panic!("{name}: a line that is not a whole record ({err}): {line:?}")
            });
            assert!(record["level"].is_string(), "{name}: {line}");
        }
        seen.extend(markers(text));
    }
    // No marker lost: from the first batch wholly after the oldest kept line, every marker is
    // there (a batch's rejections are logged together, in any order).
    let first = *seen.iter().next().expect("markers in the kept files");
    let from = (first / BATCH + 1) * BATCH;
    let missing: Vec<usize> = (from..written).filter(|n| !seen.contains(n)).collect();
    assert!(
        missing.is_empty(),
        "markers lost: {missing:?} (kept from {first})"
    );
    assert!(
        written - from >= BATCH,
        "too few markers checked: {from}..{written}"
    );
}

/// Runs sergeant (on the fake adapter) to its exit with `args`: its exit code and stderr.
fn run_with(args: &[&str]) -> (Option<i32>, String) {
    let config = TestConfig::new().sergeant("runtimeAdapter: fake\n");
    let dir = tempfile::tempdir().expect("dir");
    let config_path = dir.path().join("config.yaml");
    fs::write(&config_path, config.render()).expect("config written");
    let output = Command::new(binary())
        .arg("--config")
        .arg(&config_path)
        .args(args)
        .env_remove("FAILPOINTS")
        .output()
        .expect("sergeant runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn bad_log_file_flags_are_refused_naming_the_flag() {
    let dir = tempfile::tempdir().expect("dir");
    let missing_dir = dir.path().join("no-such-dir").join("agent.log");
    let missing_dir = missing_dir.to_str().expect("utf-8");
    let cases: [(&[&str], &str); 3] = [
        (&["--log-file-max-size", "-1"], "--log-file-max-size"),
        (&["--log-file-max-size", "ten"], "--log-file-max-size"),
        (
            &["--log-file", missing_dir, "--log-file-max-size", "1"],
            "--log-file ",
        ),
    ];
    for (args, named) in cases {
        let (code, stderr) = run_with(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(named), "{args:?}: {stderr}");
    }
}

#[test]
fn windows_service_mode_is_refused_off_windows() {
    let (code, stderr) = run_with(&["--windows-service"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--windows-service: only the Windows build"),
        "{stderr}"
    );
}
