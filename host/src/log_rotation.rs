//! The file side of container log rotation, laid out as upstream's does it so that tools which
//! read rotated kubelet logs (`kubectl logs`, log shippers) find them where they expect:
//! `<log>` is the file the runtime writes, `<log>.<YYYYMMDD-HHMMSS>` the newest rotated one
//! (plain, so a reader that was following it can finish), and older ones `<log>.<stamp>.gz`.
//!
//! Everything here is blocking file I/O: the container log manager runs it on the blocking
//! pool, and asks the runtime to reopen the log after a rotation.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use flate2::write::GzEncoder;
use flate2::Compression;
use sergeant_core::time::format_utc;

use crate::file_mode::{create_file_with_mode, mode_of};

/// Suffix of a compressed rotated log.
const COMPRESSED: &str = ".gz";
/// Suffix of a compressed log being written; one left over is an interrupted compression.
const TEMPORARY: &str = ".tmp";
/// The UTC timestamp a rotated log's name ends with.
const STAMP: &str = "%Y%m%d-%H%M%S";

/// How big a container's log may grow before it is rotated, and how many of its files are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// Rotate once the log reaches this many bytes (`containerLogMaxSize`).
    pub max_size: u64,
    /// Files kept per log, the one being written included (`containerLogMaxFiles`).
    pub max_files: usize,
}

/// What [`rotate`] found, and what the runtime must do next.
#[derive(Debug, PartialEq, Eq)]
pub enum Checked {
    /// The log is below the maximum size: nothing was done.
    Small,
    /// The log file is gone: the runtime should reopen it.
    Missing,
    /// The log was renamed to this path: the runtime must reopen the log, or, if it cannot,
    /// the file must be put back with [`restore`].
    Rotated(PathBuf),
}

/// A file operation of a rotation that failed, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum RotateError {
    /// Reading, writing, renaming or removing a file failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file it was done to.
        path: PathBuf,
        /// Why it failed.
        #[source]
        source: io::Error,
    },
    /// The log path names no file (it is empty or ends in `..`).
    #[error("log path {} names no file", .0.display())]
    NoFileName(PathBuf),
    /// The rotated name is taken (two rotations within one second); nothing is overwritten.
    #[error("{} already exists", .0.display())]
    Taken(PathBuf),
}

/// Wraps an I/O error of `action` on `path`.
fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> RotateError {
    let path = path.to_path_buf();
    move |source| RotateError::Io {
        action,
        path,
        source,
    }
}

/// Rotates `log` if it has reached `policy.max_size`: removes leftovers of interrupted
/// rotations and the oldest rotated files so that, once the runtime reopens the log, at most
/// `policy.max_files` files remain; compresses the rotated files; and renames `log` to
/// `<log>.<now as YYYYMMDD-HHMMSS, UTC>`.
///
/// # Errors
/// [`RotateError`] naming the file an operation failed on; `log` is left in place then.
pub fn rotate(log: &Path, policy: Policy, now: SystemTime) -> Result<Checked, RotateError> {
    let size = match fs::metadata(log) {
        Ok(metadata) => metadata.len(),
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Checked::Missing),
        Err(err) => return Err(io_error("read the size of", log)(err)),
    };
    if size < policy.max_size {
        return Ok(Checked::Small);
    }
    let target = with_suffix(log, &format!(".{}", format_utc(now, STAMP)));
    if target.exists() || with_suffix(&target, COMPRESSED).exists() {
        return Err(RotateError::Taken(target));
    }
    let rotated = remove_unused(rotated_files(log)?)?;
    for file in remove_excess(rotated, policy.max_files)? {
        if !file.as_os_str().to_string_lossy().ends_with(COMPRESSED) {
            compress(&file)?;
        }
    }
    fs::rename(log, &target).map_err(io_error("rename", log))?;
    Ok(Checked::Rotated(target))
}

/// Puts a rotated log back under its own name, after the runtime could not reopen it; the next
/// pass tries again.
///
/// # Errors
/// [`RotateError::Io`] when the rename fails.
pub fn restore(log: &Path, rotated: &Path) -> Result<(), RotateError> {
    fs::rename(rotated, log).map_err(io_error("rename", rotated))
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = OsString::from(path.as_os_str());
    name.push(suffix);
    PathBuf::from(name)
}

/// Every file named `<log>.*`, oldest first (the timestamps sort by name).
fn rotated_files(log: &Path) -> Result<Vec<PathBuf>, RotateError> {
    let name = log
        .file_name()
        .ok_or_else(|| RotateError::NoFileName(log.to_path_buf()))?;
    let prefix = format!("{}.", name.to_string_lossy());
    let dir = log.parent().unwrap_or(Path::new("."));
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).map_err(io_error("list", dir))? {
        let entry = entry.map_err(io_error("list", dir))?;
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            files.push(entry.path());
        }
    }
    files.sort();
    Ok(files)
}

/// Removes what interrupted rotations left: half-written compressions, and plain files whose
/// compressed copy was finished. Returns the files still in use.
fn remove_unused(files: Vec<PathBuf>) -> Result<Vec<PathBuf>, RotateError> {
    let (unused, in_use): (Vec<_>, Vec<_>) = files.iter().cloned().partition(|file| {
        file.as_os_str().to_string_lossy().ends_with(TEMPORARY)
            || files.contains(&with_suffix(file, COMPRESSED))
    });
    for file in &unused {
        fs::remove_file(file).map_err(io_error("remove", file))?;
    }
    Ok(in_use)
}

/// Removes the oldest of `rotated` (sorted oldest first) so that, with the log being rotated and
/// the new one the runtime opens, at most `max_files` remain. Returns the ones kept.
fn remove_excess(mut rotated: Vec<PathBuf>, max_files: usize) -> Result<Vec<PathBuf>, RotateError> {
    let excess = rotated.len().saturating_sub(max_files.saturating_sub(2));
    for file in rotated.drain(..excess) {
        fs::remove_file(&file).map_err(io_error("remove", &file))?;
    }
    Ok(rotated)
}

/// Compresses `file` to `<file>.gz` through `<file>.tmp`, so the final name only ever holds a
/// complete archive, then removes `file`.
fn compress(file: &Path) -> Result<(), RotateError> {
    let temporary = with_suffix(file, TEMPORARY);
    let written = write_compressed(file, &temporary);
    if written.is_err() {
        // Best effort: the next rotation removes a leftover temporary file anyway.
        let _ = fs::remove_file(&temporary);
    }
    written?;
    let compressed = with_suffix(file, COMPRESSED);
    fs::rename(&temporary, &compressed).map_err(io_error("rename", &temporary))?;
    fs::remove_file(file).map_err(io_error("remove", file))
}

fn write_compressed(file: &Path, temporary: &Path) -> Result<(), RotateError> {
    let mut source = File::open(file).map_err(io_error("open", file))?;
    let mode = mode_of(
        &source
            .metadata()
            .map_err(io_error("read the mode of", file))?,
    );
    let target = create_file_with_mode(
        OpenOptions::new().write(true).create(true).truncate(true),
        mode,
    )
    .open(temporary)
    .map_err(io_error("create", temporary))?;
    let mut encoder = GzEncoder::new(target, Compression::default());
    io::copy(&mut source, &mut encoder).map_err(io_error("compress", file))?;
    let target = encoder.finish().map_err(io_error("write", temporary))?;
    target.sync_all().map_err(io_error("flush", temporary))
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::time::Duration;

    use flate2::read::GzDecoder;

    use super::*;

    const POLICY: Policy = Policy {
        max_size: 10,
        max_files: 3,
    };
    /// 2023-11-14T22:13:20Z
    const NOW: u64 = 1_700_000_000;

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn gunzip(path: &Path) -> String {
        let mut text = String::new();
        GzDecoder::new(File::open(path).unwrap())
            .read_to_string(&mut text)
            .unwrap();
        text
    }

    #[test]
    fn a_small_or_missing_log_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("0.log");
        assert_eq!(rotate(&log, POLICY, at(NOW)).unwrap(), Checked::Missing);
        fs::write(&log, "123456789").unwrap();
        assert_eq!(rotate(&log, POLICY, at(NOW)).unwrap(), Checked::Small);
        assert_eq!(names(dir.path()), ["0.log"]);
    }

    #[test]
    fn a_full_log_is_renamed_with_a_utc_timestamp_and_can_be_restored() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("0.log");
        fs::write(&log, "0123456789").unwrap();
        let rotated = dir.path().join("0.log.20231114-221320");
        assert_eq!(
            rotate(&log, POLICY, at(NOW)).unwrap(),
            Checked::Rotated(rotated.clone())
        );
        assert_eq!(names(dir.path()), ["0.log.20231114-221320"]);
        restore(&log, &rotated).unwrap();
        assert_eq!(fs::read_to_string(&log).unwrap(), "0123456789");
    }

    #[test]
    fn older_rotations_are_compressed_and_the_oldest_removed() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("0.log");
        for (i, text) in ["first line\n", "second line\n", "third line\n"]
            .iter()
            .enumerate()
        {
            fs::write(&log, text).unwrap();
            rotate(&log, POLICY, at(NOW + 60 * i as u64)).unwrap();
        }
        // Before the third rotation: one compressed and the plain newest; the oldest went.
        assert_eq!(
            names(dir.path()),
            ["0.log.20231114-221420.gz", "0.log.20231114-221520"]
        );
        assert_eq!(
            gunzip(&dir.path().join("0.log.20231114-221420.gz")),
            "second line\n"
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("0.log.20231114-221520")).unwrap(),
            "third line\n"
        );
    }

    #[test]
    fn leftovers_of_interrupted_rotations_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("0.log");
        let policy = Policy {
            max_files: 5,
            ..POLICY
        };
        fs::write(dir.path().join("0.log.20200101-000000.tmp"), "half").unwrap();
        fs::write(dir.path().join("0.log.20200101-000001"), "done").unwrap();
        fs::write(dir.path().join("0.log.20200101-000001.gz"), "done").unwrap();
        fs::write(dir.path().join("1.log"), "another container instance").unwrap();
        fs::write(&log, "0123456789").unwrap();
        rotate(&log, policy, at(NOW)).unwrap();
        assert_eq!(
            names(dir.path()),
            ["0.log.20200101-000001.gz", "0.log.20231114-221320", "1.log"]
        );
    }

    #[test]
    fn a_taken_rotated_name_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("0.log");
        fs::write(&log, "0123456789").unwrap();
        rotate(&log, POLICY, at(NOW)).unwrap();
        fs::write(&log, "0123456789").unwrap();
        let err = rotate(&log, POLICY, at(NOW)).unwrap_err();
        assert!(matches!(err, RotateError::Taken(_)), "{err}");
        assert!(log.exists());
    }
}
