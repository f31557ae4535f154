//! The node's cgroup v1 hierarchies as the tests read them back (these machines are cgroup v1):
//! where a cgroup's files are, what they hold, and a guard that removes a test's own cgroup root.

use std::path::PathBuf;

/// The directory of cgroup `path` in the v1 hierarchy of `controller`.
pub fn cgroup_dir(controller: &str, path: &str) -> PathBuf {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    let mount = mountinfo
        .lines()
        .find_map(|line| {
            let (before, after) = line.split_once(" - ")?;
            let mut after = after.split(' ');
            let (fs_type, _, options) = (after.next()?, after.next()?, after.next()?);
            (fs_type == "cgroup" && options.split(',').any(|o| o == controller))
                .then(|| before.split(' ').nth(4).map(PathBuf::from))?
        })
        .unwrap_or_else(|| panic!("no cgroup v1 hierarchy with {controller}"));
    mount.join(path.trim_start_matches('/'))
}

/// The trimmed content of `file` of cgroup `path` in the hierarchy of `controller`.
pub fn read(controller: &str, path: &str, file: &str) -> String {
    let file_path = cgroup_dir(controller, path).join(file);
    std::fs::read_to_string(&file_path)
        .unwrap_or_else(|e| panic!("{}: {e}", file_path.display()))
        .trim()
        .to_owned()
}

/// `text` as a number; panics naming it otherwise.
pub fn number(text: &str) -> i64 {
    text.parse()
        .unwrap_or_else(|_| panic!("{text:?} is not a number"))
}

/// Removes the test's cgroup root (and what is left under it) from every hierarchy once the
/// agent is gone.
pub struct CleanRoot(pub String);

impl Drop for CleanRoot {
    fn drop(&mut self) {
        for controller in [
            "cpu", "memory", "pids", "cpuset", "cpuacct", "blkio", "devices", "freezer",
        ] {
            let root = cgroup_dir(controller, &self.0);
            for sub in ["kubepods/burstable", "kubepods/besteffort", "kubepods", ""] {
                let _ = std::fs::remove_dir(root.join(sub));
            }
        }
    }
}
