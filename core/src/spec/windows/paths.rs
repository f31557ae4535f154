//! Paths inside a Windows container, as upstream's Windows kubelet writes them into the CRI
//! request: the termination log drive-rooted, relative volume mount paths under `c:\`, and
//! the managed hosts file at the place Windows keeps it.

/// Where a Windows container finds its hosts file; the pod's managed hosts file is mounted
/// there (upstream's kubelet mounts it there on Windows, at `/etc/hosts` on Linux).
pub const WINDOWS_ETC_HOSTS: &str = r"C:\Windows\System32\drivers\etc\hosts";

/// `path` made absolute for a Windows container, as the termination log's path is: kept when
/// it names a drive (has a `:`), put on drive `c:` when it starts at a root (`/x`, `\x`), and
/// under `c:\` when it is relative. So `/dev/termination-log` is `c:/dev/termination-log`.
#[must_use]
pub fn drive_rooted(path: &str) -> String {
    if path.contains(':') {
        path.to_owned()
    } else if path.starts_with('/') || path.starts_with('\\') {
        format!("c:{path}")
    } else {
        format!(r"c:\{path}")
    }
}

/// A volume's `mountPath` as a Windows container gets it: a path that starts at a root (`/x`,
/// `\x`, a UNC share `\\server\share`) or names a drive is kept as written, a relative one is
/// put under `c:\`.
#[must_use]
pub fn volume_mount_path(path: &str) -> String {
    if path.contains(':') || path.starts_with('/') || path.starts_with('\\') {
        path.to_owned()
    } else {
        drive_rooted(path)
    }
}

#[cfg(test)]
mod tests {
    use super::{drive_rooted, volume_mount_path};

    #[test]
    fn the_termination_log_is_put_on_drive_c_unless_it_names_a_drive() {
        for (given, sent) in [
            ("/dev/termination-log", "c:/dev/termination-log"),
            (r"\data", r"c:\data"),
            ("data", r"c:\data"),
            (r"C:\scratch", r"C:\scratch"),
        ] {
            assert_eq!(drive_rooted(given), sent, "{given}");
        }
    }

    #[test]
    fn only_relative_volume_mount_paths_change() {
        for (given, sent) in [
            ("/scratch", "/scratch"),
            (r"\scratch", r"\scratch"),
            (r"C:\scratch", r"C:\scratch"),
            ("d:/cache", "d:/cache"),
            (r"\\server\share", r"\\server\share"),
            ("data", r"c:\data"),
        ] {
            assert_eq!(volume_mount_path(given), sent, "{given}");
        }
    }
}
