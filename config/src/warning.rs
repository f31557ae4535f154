//! [`ConfigWarning`]: a setting sergeant accepts but does not act on the way upstream's kubelet
//! would, said at start-up in the log and kept at `/debug/config`, so nothing in the file is
//! silently ignored.

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
