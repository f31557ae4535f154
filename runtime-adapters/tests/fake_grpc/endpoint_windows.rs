//! A fresh endpoint for one test on Windows: a named pipe named after the process and a counter.

use std::sync::atomic::{AtomicU32, Ordering};

use sergeant_config::Endpoint;

/// An endpoint nobody else uses (a pipe disappears with its last handle).
pub struct Place {
    endpoint: Endpoint,
}

impl Place {
    /// The endpoint to serve and dial.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }
}

/// A pipe name unique to this process and call.
pub fn fresh() -> Place {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        "sergeant-fake-cri-test-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let endpoint =
        Endpoint::parse(&format!("npipe://./pipe/{name}")).expect("a valid pipe endpoint");
    Place { endpoint }
}
