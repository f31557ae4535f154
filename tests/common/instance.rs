//! Private containerd instances a test starts itself with `deploy/node-env/node-env.sh` (a
//! runtime the test may stop, or one set up differently from the shared ones), stopped when
//! dropped however the test ends.

use std::path::Path;
use std::process::Command;

/// Runs `node-env.sh ACTION --instance INSTANCE EXTRA...` and returns what it prints.
///
/// Panics with node-env's error output when it fails.
pub fn node_env(action: &str, instance: &str, extra: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/node-env/node-env.sh");
    let out = Command::new("bash")
        .arg(script)
        .args([action, "--instance", instance])
        .args(extra)
        .output()
        .expect("node-env.sh runs");
    assert!(
        out.status.success(),
        "node-env.sh {action} --instance {instance}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A running instance and the environment `node-env.sh up` printed for it.
pub struct Instance {
    name: &'static str,
    env: String,
}

impl Instance {
    /// Starts instance `name` with the extra `up` options `extra`.
    pub fn up(name: &'static str, extra: &[&str]) -> Self {
        // Dropped (and so stopped) even when `up` fails half-way.
        let mut instance = Self {
            name,
            env: String::new(),
        };
        instance.env = node_env("up", name, extra);
        instance
    }

    /// The value of `key` in the instance's environment (`CONTAINERD_ENDPOINT`, ...).
    pub fn var(&self, key: &str) -> &str {
        let prefix = format!("{key}=");
        self.env
            .lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .unwrap_or_else(|| panic!("node-env.sh printed no {key}"))
    }

    /// The instance's CRI endpoint.
    pub fn endpoint(&self) -> &str {
        self.var("CONTAINERD_ENDPOINT")
    }

    /// Stops the instance now (a runtime that goes away).
    pub fn stop(&self) {
        node_env("down", self.name, &[]);
    }

    /// Starts the stopped instance again, as it was.
    pub fn restart(&self) {
        node_env("up", self.name, &[]);
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = std::panic::catch_unwind(|| node_env("down", self.name, &[]));
    }
}
