//! [`Recorder`]: the requests that shape a pod, as the fake CRI server received them, appended
//! to a file one JSON line each.
//!
//! Why it exists: to compare what two node agents ask a runtime for the same pod (sergeant and
//! upstream's kubelet, each against its own fake server), field by field, the requests must be
//! kept exactly as they arrived over the wire. Only the calls that carry a pod's shape are
//! recorded (see [`RECORDED`]); status and list calls would only add noise.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::Serialize;

/// The gRPC methods whose requests are recorded: the sandbox, each container, each image pull
/// and each resize.
pub const RECORDED: [&str; 4] = [
    "RunPodSandbox",
    "CreateContainer",
    "PullImage",
    "UpdateContainerResources",
];

/// One recorded line: `{"method": "CreateContainer", "request": {...}}`, the request in the
/// CRI types' own serde form (field names as in the Rust types, enums as numbers).
#[derive(Serialize)]
struct Line<'a, R> {
    method: &'a str,
    request: &'a R,
}

/// Appends recorded requests to a file; clones share the file.
#[derive(Debug, Clone)]
pub struct Recorder {
    file: Arc<Mutex<File>>,
}

impl Recorder {
    /// A recorder appending to `path`, created if missing (an existing file is kept, so
    /// several runs can add to one record).
    ///
    /// # Errors
    /// When the file cannot be opened for appending.
    pub fn append_to(path: &Path) -> io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self {
            file: Arc::new(Mutex::new(file)),
        })
    }

    /// Records `request` of gRPC method `method` if that method is one of [`RECORDED`]; other
    /// methods are ignored. A line that cannot be written is reported on stderr and dropped:
    /// the runtime call itself goes on.
    pub fn record<R: Serialize>(&self, method: &str, request: &R) {
        if !RECORDED.contains(&method) {
            return;
        }
        let mut line = match serde_json::to_vec(&Line { method, request }) {
            Ok(line) => line,
            Err(error) => {
                eprintln!("sergeant-fake-cri: cannot record {method}: {error}");
                return;
            }
        };
        line.push(b'\n');
        // One write per line under the lock, so concurrent calls never interleave.
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Err(error) = file.write_all(&line).and_then(|()| file.flush()) {
            eprintln!("sergeant-fake-cri: cannot record {method}: {error}");
        }
    }
}
