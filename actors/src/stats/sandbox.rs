//! What the summary needs from a pod sandbox that stays the same over its life: the pid of
//! its infrastructure process (whose network namespace is the pod's) and its log directory.
//! Both come from the runtime's verbose `PodSandboxStatus` (containerd's `info`), asked once
//! per sandbox and kept.

use std::collections::HashMap;
use std::path::PathBuf;

use serde::Deserialize;
use sergeant_messages::runtime::cri;

use crate::runtime::RuntimePort;
pub use sergeant_host::stats::pods::SandboxInfo;

/// The part of containerd's verbose `info` read here.
#[derive(Deserialize)]
struct Verbose {
    #[serde(default)]
    pid: Option<u32>,
    #[serde(default)]
    config: Option<VerboseConfig>,
}

#[derive(Deserialize)]
struct VerboseConfig {
    #[serde(default)]
    log_directory: Option<String>,
}

/// Reads a verbose `PodSandboxStatus` `info` map; what is missing or unreadable stays `None`.
#[must_use]
pub fn parse(info: &HashMap<String, String>) -> SandboxInfo {
    let Some(verbose) = info
        .get("info")
        .and_then(|text| serde_json::from_str::<Verbose>(text).ok())
    else {
        return SandboxInfo::default();
    };
    SandboxInfo {
        pid: verbose.pid.filter(|pid| *pid > 0),
        log_directory: verbose
            .config
            .and_then(|config| config.log_directory)
            .filter(|dir| !dir.is_empty())
            .map(PathBuf::from),
    }
}

/// Asks the runtime about sandbox `id`; `None` when it cannot answer now (ask again later).
pub async fn fetch(port: &RuntimePort, id: String) -> Option<(String, SandboxInfo)> {
    let request = cri::PodSandboxStatusRequest {
        pod_sandbox_id: id.clone(),
        verbose: true,
    };
    match port.call(request).await {
        Ok(response) => Some((id, parse(&response.info))),
        Err(err) => {
            tracing::debug!(sandbox = %id, "verbose sandbox status: {err}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containerd_info_gives_the_pid_and_log_directory() {
        let info = HashMap::from([(
            "info".to_string(),
            r#"{"pid": 4242, "image": "pause", "config": {"metadata": {"name": "web"},
                "log_directory": "/var/log/pods/ns_web_u1"}}"#
                .to_string(),
        )]);
        assert_eq!(
            parse(&info),
            SandboxInfo {
                pid: Some(4242),
                log_directory: Some(PathBuf::from("/var/log/pods/ns_web_u1")),
            }
        );
    }

    #[test]
    fn missing_or_odd_info_gives_nothing() {
        assert_eq!(parse(&HashMap::new()), SandboxInfo::default());
        let odd = HashMap::from([("info".to_string(), "not json".to_string())]);
        assert_eq!(parse(&odd), SandboxInfo::default());
        let stopped = HashMap::from([("info".to_string(), r#"{"pid": 0}"#.to_string())]);
        assert_eq!(parse(&stopped).pid, None);
    }
}
