//! A volume's `mountPath` as the runtime gets it: upstream's validation takes any path, and its
//! kubelet makes a path that is not absolute on the node's OS absolute there (`MakeAbsolutePath`):
//! under `/` on Linux, on drive `c:` on Windows (see [`super::windows::volume_mount_path`]).

use super::windows::volume_mount_path;
use crate::context::NodeOs;

/// `path` (a volume mount's `mountPath`) made absolute inside a container on an `os` node.
#[must_use]
pub fn container_mount_path(os: NodeOs, path: &str) -> String {
    match os {
        NodeOs::Linux => rooted(path),
        NodeOs::Windows => volume_mount_path(path),
    }
}

/// `path` kept when it starts at the root, else put under `/` with its `.` and `..` steps and
/// empty parts resolved (Go's `filepath.Clean("/" + path)`, as upstream's Linux kubelet does).
fn rooted(path: &str) -> String {
    if path.starts_with('/') {
        return path.to_owned();
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_not_absolute_on_the_nodes_os_is_made_absolute_there() {
        // (mountPath, on Linux, on Windows)
        let cases = [
            ("/data", "/data", "/data"),
            ("/a/../b/", "/a/../b/", "/a/../b/"),
            ("data", "/data", r"c:\data"),
            ("a/./b//c/", "/a/b/c", r"c:\a/./b//c/"),
            ("../../etc", "/etc", r"c:\../../etc"),
            ("..", "/", r"c:\.."),
            (r"C:\scratch", r"/C:\scratch", r"C:\scratch"),
            (r"\\server\share", r"/\\server\share", r"\\server\share"),
            (r"\scratch", r"/\scratch", r"\scratch"),
        ];
        for (given, linux, windows) in cases {
            assert_eq!(container_mount_path(NodeOs::Linux, given), linux, "{given}");
            assert_eq!(
                container_mount_path(NodeOs::Windows, given),
                windows,
                "{given}"
            );
        }
    }
}
