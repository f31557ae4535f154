//! `--log-file` and `--log-file-max-size`: the agent's log written to a file instead of stderr,
//! rotated once it would pass a size. Upstream's flags and units (MB of 1024 × 1024 bytes,
//! default 1800, 0 = never rotate); unlike upstream, at most [`KEPT_OLD_FILES`] rotated files
//! are kept beside the live one (`PATH.1` newest … `PATH.5` oldest), so the log's disk use is
//! bounded.
//!
//! Every log record (one formatted event, one line) is written whole to one file: the writer
//! handed to tracing collects the record and appends it under a lock when tracing is done with
//! it, and the file is rotated before a record that would not fit, never in the middle of one.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use tracing_subscriber::fmt::MakeWriter;

/// How many rotated files are kept beside the live one; the oldest is deleted past this.
pub const KEPT_OLD_FILES: usize = 5;
/// `--log-file-max-size` when not given, in MB: upstream's default.
pub const DEFAULT_MAX_SIZE_MB: u64 = 1800;
/// Bytes in one MB of `--log-file-max-size` (upstream counts 1024 × 1024).
const BYTES_PER_MB: u64 = 1024 * 1024;

/// Why the log file flags cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LogFileError {
    /// `--log-file` was given an empty path.
    #[error("--log-file: the path is empty")]
    EmptyPath,
    /// `--log-file-max-size` is more bytes than a file size can count.
    #[error("--log-file-max-size {0}: too large (at most {max} MB)", max = u64::MAX / BYTES_PER_MB)]
    TooLarge(u64),
    /// The file (or its directory) cannot be opened for appending.
    #[error("--log-file {}: cannot open it for appending: {source}", path.display())]
    Open {
        /// The path given.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
}

/// What the two flags ask for, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFileSettings {
    /// The live file.
    pub path: PathBuf,
    /// Rotate before a record would take the file past this many bytes; `None` never rotates.
    pub max_bytes: Option<u64>,
}

impl LogFileSettings {
    /// The settings for `--log-file PATH` and `--log-file-max-size MB` (default
    /// [`DEFAULT_MAX_SIZE_MB`]); `None` without `--log-file`.
    ///
    /// # Errors
    /// An empty path, or a size whose bytes overflow.
    pub fn from_flags(
        path: Option<&Path>,
        max_mb: Option<u64>,
    ) -> Result<Option<Self>, LogFileError> {
        let Some(path) = path else { return Ok(None) };
        if path.as_os_str().is_empty() {
            return Err(LogFileError::EmptyPath);
        }
        let max_mb = max_mb.unwrap_or(DEFAULT_MAX_SIZE_MB);
        let max_bytes = match max_mb {
            0 => None,
            mb => Some(
                mb.checked_mul(BYTES_PER_MB)
                    .ok_or(LogFileError::TooLarge(mb))?,
            ),
        };
        Ok(Some(Self {
            path: path.to_owned(),
            max_bytes,
        }))
    }
}

/// The log file, shared by every writer tracing makes; cheap to clone.
#[derive(Debug, Clone)]
pub struct RotatingFile {
    live: Arc<Mutex<Live>>,
}

/// The open file and how much is in it.
#[derive(Debug)]
struct Live {
    path: PathBuf,
    file: File,
    size: u64,
    max_bytes: Option<u64>,
}

impl RotatingFile {
    /// Opens (creating, or appending to) the live file; what it already holds counts toward
    /// the size.
    ///
    /// # Errors
    /// When the file cannot be opened or its size read.
    pub fn open(settings: &LogFileSettings) -> Result<Self, LogFileError> {
        let opened = open_append(&settings.path).and_then(|file| {
            let size = file.metadata()?.len();
            Ok((file, size))
        });
        let (file, size) = opened.map_err(|source| LogFileError::Open {
            path: settings.path.clone(),
            source,
        })?;
        Ok(Self {
            live: Arc::new(Mutex::new(Live {
                path: settings.path.clone(),
                file,
                size,
                max_bytes: settings.max_bytes,
            })),
        })
    }

    /// Appends one whole record, rotating first when it would not fit. A record that cannot be
    /// written goes to stderr with the reason, so it is not lost.
    fn append(&self, record: &[u8]) {
        let mut live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        if live.is_full_for(record.len()) {
            if let Err(err) = live.rotate() {
                // Rotation stops rather than failing on every record; the log keeps growing
                // in the live file.
                eprintln!(
                    "sergeant: --log-file {}: rotation failed, no longer rotating: {err}",
                    live.path.display()
                );
                live.max_bytes = None;
            }
        }
        match live.file.write_all(record) {
            Ok(()) => live.size = live.size.saturating_add(record.len() as u64),
            Err(err) => {
                let mut stderr = io::stderr().lock();
                let _ = writeln!(
                    stderr,
                    "sergeant: --log-file {}: {err}; the record:",
                    live.path.display()
                );
                let _ = stderr.write_all(record);
            }
        }
    }
}

impl Live {
    /// Whether a record of `len` bytes must go to a fresh file: it would take a non-empty file
    /// past the limit (a record larger than the limit gets a file of its own).
    fn is_full_for(&self, len: usize) -> bool {
        self.max_bytes
            .is_some_and(|max| self.size > 0 && self.size.saturating_add(len as u64) > max)
    }

    /// Shifts `PATH.n` to `PATH.n+1` (dropping the oldest), moves the live file to `PATH.1`
    /// and opens a new live file. The old handle stays in use until the new file is open, so a
    /// failure leaves a working log.
    fn rotate(&mut self) -> io::Result<()> {
        for n in (1..KEPT_OLD_FILES).rev() {
            match fs::rename(numbered(&self.path, n), numbered(&self.path, n + 1)) {
                Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
                _ => {}
            }
        }
        fs::rename(&self.path, numbered(&self.path, 1))?;
        self.file = open_append(&self.path)?;
        self.size = 0;
        Ok(())
    }
}

/// `PATH.n`, the `n`th newest rotated file.
fn numbered(path: &Path, n: usize) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

impl<'a> MakeWriter<'a> for RotatingFile {
    type Writer = Record<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        Record {
            file: self,
            bytes: Vec::new(),
        }
    }
}

/// One record being formatted; appended to the file whole when tracing drops it.
#[derive(Debug)]
pub struct Record<'a> {
    file: &'a RotatingFile,
    bytes: Vec<u8>,
}

impl Write for Record<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for Record<'_> {
    fn drop(&mut self) {
        if !self.bytes.is_empty() {
            self.file.append(&self.bytes);
        }
    }
}

#[cfg(test)]
mod tests;
