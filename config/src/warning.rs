//! [`ConfigWarning`]: a setting sergeant accepts but does not act on the way upstream's kubelet
//! would, said at start-up in the log and kept at `/debug/config`, so nothing in the file is
//! silently ignored. [`Notice`] is the same before it is placed in its file.

use std::fmt;

use serde::Serialize;

/// One accepted setting that has no effect (or less effect than upstream gives it), and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigWarning {
    /// The file the setting is in.
    pub file: String,
    /// The 1-based line of its key, when it is written in the file (not a default).
    pub line: Option<usize>,
    /// Its key path, e.g. `shutdownGracePeriod` or `featureGates.PodLevelResources`.
    pub field: String,
    /// What sergeant does instead, and why.
    pub reason: String,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}: {}", self.file, self.field, self.reason),
            None => write!(f, "{}: {}: {}", self.file, self.field, self.reason),
        }
    }
}

/// A setting accepted without the effect upstream gives it: its key path and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Notice {
    /// The key path, dotted (`featureGates.PodLevelResources`).
    pub(crate) field: String,
    /// What sergeant does instead.
    pub(crate) reason: String,
}

impl Notice {
    pub(crate) fn new(field: &str, reason: String) -> Self {
        Notice {
            field: field.to_owned(),
            reason,
        }
    }
}
