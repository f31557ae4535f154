//! The agent's footprint in the disk scenario's quiet phase (one pod): its RSS and CPU, and the
//! CPU of the benchmark's containerd instance alongside.

use std::fs;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::managed::cri_endpoint;
use crate::process;

/// The quiet window of the footprint.
pub const QUIET_WINDOW: Duration = Duration::from_secs(20);

/// The processes of the benchmark's containerd instance: its containerd and shims, which
/// name the instance's directory (the endpoint's) on their command lines.
fn runtime_pids() -> Vec<u32> {
    let endpoint = cri_endpoint();
    let socket = Path::new(endpoint.trim_start_matches("unix://"));
    let Some(dir) = socket.parent().map(|d| format!("{}/", d.display())) else {
        return Vec::new();
    };
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(&dir))
        })
        .collect()
}

/// The agent's footprint over the quiet window: its RSS at the end and its CPU, and the CPU of
/// the containerd instance, measured alongside.
pub fn quiet_footprint(agent_pid: u32) -> Value {
    let runtime = runtime_pids();
    let runtime_thread = std::thread::spawn(move || process::cpu_percent(&runtime, QUIET_WINDOW));
    let agent_cpu = process::cpu_percent(&[agent_pid], QUIET_WINDOW);
    let runtime_cpu = runtime_thread.join().unwrap_or(f64::NAN);
    #[allow(clippy::cast_precision_loss)]
    let rss_mib = process::rss_kib(agent_pid) as f64 / 1024.0;
    json!({
        "agent_rss_mib": rss_mib,
        "agent_cpu_percent": agent_cpu,
        "runtime_cpu_percent": runtime_cpu,
    })
}
