//! Why a kernel, system-call or filesystem number could not be read: [`HostStatsError`] for the
//! file or call, and [`ParseError`] for what is wrong in a file's text.

use std::num::ParseIntError;
use std::path::PathBuf;

/// A failure to read one of the node's numbers; it names the file or directory.
#[derive(Debug, thiserror::Error)]
pub enum HostStatsError {
    /// A kernel or filesystem file could not be read.
    #[error("reading {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A kernel file did not have the expected shape.
    #[error("{}: {source}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        source: ParseError,
    },
    /// A Windows system call the node's numbers come from failed.
    #[error("{call}: {source}")]
    SystemCall {
        /// The call.
        call: &'static str,
        /// The system's error.
        source: std::io::Error,
    },
    /// Windows' process list, whose private working sets make the node's working set, is
    /// not what the call writes.
    #[error("the process list: {0}")]
    ProcessList(#[from] super::process_list::ProcessListError),
    /// `statvfs` failed on a directory.
    #[error("statvfs {}: {source}", path.display())]
    Statvfs {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Why the text of a kernel file (procfs, or a cgroup's files) is not what the kernel writes
/// there: which line, field or counter is missing or malformed, and how. It exists so the
/// parsers of those files, pure functions on their text, say what is wrong in a form their
/// callers can tell apart (a missing field from a malformed number), while the caller that
/// read the file adds its path ([`HostStatsError::Parse`], or a cgroup error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// A line, field or counter the file always has is not there; `what` names it as the
    /// message does (`"btime" line`, `"MemFree" field`).
    #[error("no {what}")]
    Missing {
        /// The line, field or counter.
        what: String,
    },
    /// The value of a line or field is not a number.
    #[error("{field}: {source}")]
    BadNumber {
        /// The line or field, as the message names it (`btime`, `interface eth0`).
        field: String,
        /// Why it is not a number.
        source: ParseIntError,
    },
    /// A file that holds one number holds something else.
    #[error(transparent)]
    NotANumber(#[from] ParseIntError),
    /// A file that holds one value holds text that is not a number; the message quotes it.
    #[error("{text:?}: {source}")]
    BadValue {
        /// The file's text.
        text: String,
        /// Why it is not a number.
        source: ParseIntError,
    },
    /// A cgroup limit file holds text that is not what the kernel writes there (a number,
    /// or `max`).
    #[error("{text:?} is not a number")]
    BadLimit {
        /// The file's text.
        text: String,
    },
    /// A `cpu.max` file gives a period that is not positive.
    #[error("{text:?} has no positive period")]
    NoPositivePeriod {
        /// The file's text.
        text: String,
    },
    /// The aggregate `cpu` line of `/proc/stat` has fewer than the 4 fields every kernel
    /// writes.
    #[error("cpu line has {found} fields, want 4 or more")]
    CpuFields {
        /// How many it has.
        found: usize,
    },
    /// A line of `/proc/net/dev` has no `name:` before its counters.
    #[error("line {line:?} has no interface name")]
    NoInterfaceName {
        /// The line.
        line: String,
    },
    /// An interface's line of `/proc/net/dev` has fewer than its 16 counters.
    #[error("interface {interface}: {found} counters, want 16")]
    InterfaceCounters {
        /// The interface.
        interface: String,
        /// How many counters its line has.
        found: usize,
    },
}

impl ParseError {
    /// [`ParseError::Missing`] for `what`.
    pub(crate) fn missing(what: impl Into<String>) -> Self {
        Self::Missing { what: what.into() }
    }

    /// A closure making [`ParseError::BadNumber`] for `field`, for `map_err`.
    pub(crate) fn bad_number(field: impl Into<String>) -> impl FnOnce(ParseIntError) -> Self {
        move |source| Self::BadNumber {
            field: field.into(),
            source,
        }
    }
}
