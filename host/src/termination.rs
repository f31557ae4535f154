//! Termination messages: what a container wrote to its `terminationMessagePath` before it
//! exited, or — with `FallbackToLogsOnError` and a failure — the tail of its log, as upstream
//! reports them in the container's terminated state.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use k8s_cri::v1 as cri;

use sergeant_core::labels;
use sergeant_core::runtime::PodRuntime;

/// The most of a message kept, as upstream (4 KiB per container).
const MAX_MESSAGE_BYTES: u64 = 4096;
/// The most log lines taken for `FallbackToLogsOnError`.
const FALLBACK_LOG_LINES: usize = 80;

/// The termination message of the newest exited instance of each container, by container
/// name. Reads small files, only for exited containers (the pod actor calls it on its own
/// thread: see `actors::pod::file_work`).
#[must_use]
pub fn read_messages(runtime: &PodRuntime) -> BTreeMap<String, String> {
    let mut messages = BTreeMap::new();
    for container in &runtime.containers {
        let name = container.name();
        if messages.contains_key(name)
            || runtime.latest_anywhere(name).map(|c| &c.status.id) != Some(&container.status.id)
        {
            continue;
        }
        if container.state() != cri::ContainerState::ContainerExited {
            continue;
        }
        if let Some(message) = message_of(&container.status) {
            messages.insert(name.to_owned(), message);
        }
    }
    messages
}

fn message_of(status: &cri::ContainerStatus) -> Option<String> {
    let from_file = status
        .annotations
        .get(labels::TERMINATION_MESSAGE_PATH)
        .and_then(|path| status.mounts.iter().find(|m| &m.container_path == path))
        .and_then(|mount| read_tail(Path::new(&mount.host_path)))
        .filter(|text| !text.trim().is_empty());
    let fallback = status
        .annotations
        .get(labels::TERMINATION_MESSAGE_POLICY)
        .map(String::as_str)
        == Some("FallbackToLogsOnError");
    match from_file {
        Some(text) => Some(text),
        None if fallback && status.exit_code != 0 => log_tail(Path::new(&status.log_path)),
        None => None,
    }
}

/// The last [`MAX_MESSAGE_BYTES`] of a file.
fn read_tail(path: &Path) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let length = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(length.saturating_sub(MAX_MESSAGE_BYTES)))
        .ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The message parts of the last lines of a CRI log file (`TIME STREAM TAG MESSAGE`).
fn log_tail(path: &Path) -> Option<String> {
    let text = read_tail(path)?;
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(FALLBACK_LOG_LINES);
    let messages: Vec<&str> = lines[start..]
        .iter()
        .map(|line| line.splitn(4, ' ').nth(3).unwrap_or_default())
        .collect();
    let joined = messages.join("\n");
    (!joined.trim().is_empty()).then_some(joined)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sergeant_core::runtime::ObservedContainer;

    #[test]
    fn only_an_exited_container_has_its_message_read() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let file = dir.path().join("termination-log");
        std::fs::write(&file, "done").expect("message written");
        let container = |name: &str, state: cri::ContainerState| ObservedContainer {
            sandbox_id: "s".to_owned(),
            status: cri::ContainerStatus {
                id: name.to_owned(),
                state: state as i32,
                labels: [(labels::CONTAINER_NAME.to_owned(), name.to_owned())].into(),
                annotations: [(
                    labels::TERMINATION_MESSAGE_PATH.to_owned(),
                    "/dev/termination-log".to_owned(),
                )]
                .into(),
                mounts: vec![cri::Mount {
                    container_path: "/dev/termination-log".to_owned(),
                    host_path: file.display().to_string(),
                    ..Default::default()
                }],
                ..Default::default()
            },
        };
        let runtime = PodRuntime {
            containers: vec![
                container("running", cri::ContainerState::ContainerRunning),
                container("exited", cri::ContainerState::ContainerExited),
            ],
            ..PodRuntime::default()
        };
        assert_eq!(
            read_messages(&runtime),
            BTreeMap::from([("exited".to_owned(), "done".to_owned())])
        );
    }

    #[test]
    fn the_log_fallback_takes_the_message_part_of_cri_log_lines() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let log = dir.path().join("0.log");
        std::fs::write(
            &log,
            "2026-01-01T00:00:00Z stdout F first\n2026-01-01T00:00:01Z stderr F it broke: badly\n",
        )
        .expect("log written");
        assert_eq!(log_tail(&log).as_deref(), Some("first\nit broke: badly"));
    }

    #[test]
    fn the_file_message_wins_and_the_fallback_needs_a_failure() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let file = dir.path().join("msg");
        let log = dir.path().join("0.log");
        std::fs::write(&log, "2026-01-01T00:00:00Z stdout F from the log\n").expect("log written");
        let status = |exit_code: i32, policy: &str| cri::ContainerStatus {
            exit_code,
            log_path: log.display().to_string(),
            annotations: [
                (
                    labels::TERMINATION_MESSAGE_PATH.to_owned(),
                    "/dev/termination-log".to_owned(),
                ),
                (
                    labels::TERMINATION_MESSAGE_POLICY.to_owned(),
                    policy.to_owned(),
                ),
            ]
            .into(),
            mounts: vec![cri::Mount {
                container_path: "/dev/termination-log".into(),
                host_path: file.display().to_string(),
                ..Default::default()
            }],
            ..Default::default()
        };
        std::fs::write(&file, "").expect("empty message");
        assert_eq!(message_of(&status(1, "File")), None);
        assert_eq!(message_of(&status(0, "FallbackToLogsOnError")), None);
        assert_eq!(
            message_of(&status(1, "FallbackToLogsOnError")).as_deref(),
            Some("from the log")
        );
        std::fs::write(&file, "written by the container\n").expect("message");
        assert_eq!(
            message_of(&status(1, "FallbackToLogsOnError")).as_deref(),
            Some("written by the container\n")
        );
    }
}
