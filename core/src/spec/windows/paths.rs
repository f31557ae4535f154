//! Paths inside a Windows container, as upstream's Windows kubelet writes them into the CRI
//! request: drive-rooted, and the managed hosts file at the place Windows keeps it.

/// Where a Windows container finds its hosts file; the pod's managed hosts file is mounted
/// there (upstream's kubelet mounts it there on Windows, at `/etc/hosts` on Linux).
pub const WINDOWS_ETC_HOSTS: &str = r"C:\Windows\System32\drivers\etc\hosts";

/// `path` as a path inside a Windows container: kept when it names a drive (has a `:`) or is
/// a UNC path (`\\server\share`), put on drive `c:` when it starts at a root (`/x`, `\x`), and
/// under `c:\` when it is relative. So `/dev/termination-log` is `c:/dev/termination-log`.
#[must_use]
pub fn container_path(path: &str) -> String {
    if path.contains(':') || path.starts_with(r"\\") {
        path.to_owned()
    } else if path.starts_with('/') || path.starts_with('\\') {
        format!("c:{path}")
    } else {
        format!(r"c:\{path}")
    }
}

#[cfg(test)]
mod tests {
    use super::container_path;

    #[test]
    fn container_paths_are_put_on_drive_c_unless_they_name_a_drive_or_a_share() {
        for (given, sent) in [
            ("/dev/termination-log", "c:/dev/termination-log"),
            (r"\data", r"c:\data"),
            ("data", r"c:\data"),
            (r"C:\scratch", r"C:\scratch"),
            ("d:/cache", "d:/cache"),
            (r"\\server\share", r"\\server\share"),
        ] {
            assert_eq!(container_path(given), sent, "{given}");
        }
    }
}
