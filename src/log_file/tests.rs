//! The rotating log file: flag checks, whole records across rotations, the bound on kept files.

use std::fs;
use std::io::Write as _;
use std::path::Path;

use tracing_subscriber::fmt::MakeWriter as _;

use super::*;

/// A rotating file at `dir/agent.log` rotating past `max_bytes`.
fn file_in(dir: &Path, max_bytes: Option<u64>) -> RotatingFile {
    RotatingFile::open(&LogFileSettings {
        path: dir.join("agent.log"),
        max_bytes,
    })
    .expect("log file opens")
}

/// Writes `text` as one record, in pieces, as a formatter may.
fn record(file: &RotatingFile, text: &str) {
    let mut writer = file.make_writer();
    let (head, tail) = text.split_at(text.len() / 2);
    writer.write_all(head.as_bytes()).expect("buffered");
    writer.write_all(tail.as_bytes()).expect("buffered");
}

/// The files at `dir/agent.log*`, oldest first, with their contents.
fn files(dir: &Path) -> Vec<(String, String)> {
    let mut found: Vec<(usize, String, String)> = fs::read_dir(dir)
        .expect("dir readable")
        .flatten()
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let age = name
                .strip_prefix("agent.log.")
                .map_or(0, |n| n.parse().expect("numbered rotation"));
            (
                age,
                name,
                fs::read_to_string(entry.path()).expect("utf-8 log"),
            )
        })
        .collect();
    found.sort_by_key(|file| std::cmp::Reverse(file.0));
    found
        .into_iter()
        .map(|(_, name, text)| (name, text))
        .collect()
}

#[test]
fn flags_are_checked_and_named() {
    assert_eq!(
        LogFileSettings::from_flags(None, Some(5)).expect("fine"),
        None
    );
    let path = Path::new("/var/log/sergeant.log");
    let default = LogFileSettings::from_flags(Some(path), None)
        .expect("fine")
        .expect("set");
    assert_eq!(default.max_bytes, Some(1800 * 1024 * 1024));
    let unlimited = LogFileSettings::from_flags(Some(path), Some(0))
        .expect("fine")
        .expect("set");
    assert_eq!(unlimited.max_bytes, None);
    let empty = LogFileSettings::from_flags(Some(Path::new("")), None).expect_err("refused");
    assert_eq!(empty.to_string(), "--log-file: the path is empty");
    let huge = LogFileSettings::from_flags(Some(path), Some(u64::MAX)).expect_err("refused");
    assert!(
        huge.to_string()
            .starts_with(&format!("--log-file-max-size {}: too large", u64::MAX)),
        "{huge}"
    );
}

#[test]
fn an_unopenable_path_is_refused_naming_the_flag_and_path() {
    let dir = tempfile::tempdir().expect("temp dir");
    let settings = LogFileSettings {
        path: dir.path().join("missing-dir").join("agent.log"),
        max_bytes: None,
    };
    let err = RotatingFile::open(&settings).expect_err("refused");
    let text = err.to_string();
    assert!(text.starts_with("--log-file "), "{text}");
    assert!(text.contains("missing-dir"), "{text}");
}

#[test]
fn every_record_lands_whole_and_in_order_until_old_files_are_dropped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = file_in(dir.path(), Some(100));
    // 12-byte records: 8 fit in 100 bytes, so 60 records need 8 files, more than kept.
    for n in 0..60 {
        record(&file, &format!("record {n:04}\n"));
    }
    let found = files(dir.path());
    assert_eq!(found.len(), KEPT_OLD_FILES + 1, "{found:?}");
    let mut seen = Vec::new();
    for (name, text) in &found {
        assert!(text.len() <= 100, "{name} has {} bytes", text.len());
        assert!(text.ends_with('\n'), "{name} ends inside a record");
        for line in text.lines() {
            let n: usize = line
                .strip_prefix("record ")
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{name}: split record {line:?}"));
            seen.push(n);
        }
    }
    // Only the oldest whole files were dropped: the rest is the newest run, without a gap.
    let first = seen[0];
    assert_eq!(seen, (first..60).collect::<Vec<_>>());
    assert_eq!(first % 8, 0, "a dropped file held whole records only");
}

#[test]
fn size_zero_never_rotates() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = file_in(dir.path(), None);
    for n in 0..500 {
        record(&file, &format!("record {n:04}\n"));
    }
    let found = files(dir.path());
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].1.lines().count(), 500);
}

#[test]
fn a_record_larger_than_the_limit_gets_a_file_of_its_own() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = file_in(dir.path(), Some(10));
    record(&file, "short\n");
    record(&file, "a record far longer than ten bytes\n");
    record(&file, "after\n");
    let texts: Vec<String> = files(dir.path())
        .into_iter()
        .map(|(_, text)| text)
        .collect();
    assert_eq!(
        texts,
        ["short\n", "a record far longer than ten bytes\n", "after\n"]
    );
}

#[test]
fn what_the_file_held_at_start_counts_toward_the_limit() {
    let dir = tempfile::tempdir().expect("temp dir");
    fs::write(dir.path().join("agent.log"), "x".repeat(95) + "\n").expect("written");
    let file = file_in(dir.path(), Some(100));
    record(&file, "new run\n");
    let found = files(dir.path());
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[1], ("agent.log".to_owned(), "new run\n".to_owned()));
}

#[test]
fn concurrent_writers_never_interleave_inside_a_record() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = file_in(dir.path(), Some(8192));
    std::thread::scope(|scope| {
        for thread in 0..4 {
            let file = file.clone();
            scope.spawn(move || {
                for n in 0..100 {
                    record(
                        &file,
                        &format!("thread {thread} record {n:03} {}\n", "=".repeat(40)),
                    );
                }
            });
        }
    });
    let found = files(dir.path());
    // 400 records of 61 bytes in 8192-byte files: 3 files, none dropped.
    assert_eq!(found.len(), 3);
    let mut count = 0;
    for (name, text) in found {
        for line in text.lines() {
            assert!(
                line.starts_with("thread ") && line.ends_with(&"=".repeat(40)),
                "{name}: {line:?}"
            );
            count += 1;
        }
    }
    assert_eq!(count, 400);
}
