//! A fresh endpoint for one test on unix: a socket in a temporary directory of its own.

use sergeant_config::Endpoint;
use tempfile::TempDir;

/// An endpoint nobody else uses, removed with the value.
pub struct Place {
    endpoint: Endpoint,
    _dir: TempDir,
}

impl Place {
    /// The endpoint to serve and dial.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }
}

/// A socket path in a new temporary directory.
pub fn fresh() -> Place {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let endpoint = Endpoint::Unix(dir.path().join("cri.sock"));
    Place {
        endpoint,
        _dir: dir,
    }
}
