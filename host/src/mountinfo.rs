//! Reading `/proc/self/mountinfo`: which paths are mount points and of what file system, so
//! cgroup hierarchies are found and pod mounts are set up and torn down idempotently.

use std::path::{Path, PathBuf};

use sergeant_core::spec::io_reason;

const MOUNTINFO: &str = "/proc/self/mountinfo";

/// One mount: where it is and its file system type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MountEntry {
    pub(crate) mount_point: PathBuf,
    pub(crate) fs_type: String,
    /// The per-superblock options (for cgroup v1: the controllers).
    pub(crate) super_options: String,
}

/// Why the mount table could not be read. Its own type because the volumes and the cgroup
/// setup both read the table and pass this on; the I/O error is its source, so a caller can
/// tell a missing `/proc` from a refused read.
#[derive(Debug, thiserror::Error)]
#[error("{MOUNTINFO}: {}", io_reason(.source))]
pub struct MountTableError {
    /// Why `/proc/self/mountinfo` could not be read.
    #[source]
    source: std::io::Error,
}

/// The mounts of this process's mount namespace.
///
/// # Errors
///
/// [`MountTableError`] when `/proc/self/mountinfo` cannot be read.
pub(crate) fn mounts() -> Result<Vec<MountEntry>, MountTableError> {
    std::fs::read_to_string(MOUNTINFO)
        .map(|text| parse(&text))
        .map_err(|source| MountTableError { source })
}

/// Whether `path` is a mount point of file system `fs_type` in `mounts`.
pub(crate) fn is_mounted(mounts: &[MountEntry], path: &Path, fs_type: &str) -> bool {
    mounts
        .iter()
        .any(|m| m.mount_point == path && m.fs_type == fs_type)
}

fn parse(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_line).collect()
}

/// `id parent major:minor root mount_point options [optional…] - fs_type source super_options`
fn parse_line(line: &str) -> Option<MountEntry> {
    let (before, after) = line.split_once(" - ")?;
    let mount_point = before.split(' ').nth(4)?;
    let mut after = after.split(' ');
    let fs_type = after.next()?.to_string();
    let super_options = after.nth(1).unwrap_or_default().to_string();
    Some(MountEntry {
        mount_point: PathBuf::from(unescape(mount_point)),
        fs_type,
        super_options,
    })
}

/// Undoes the kernel's octal escapes (`\040` for a space, `\134` for a backslash).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let code = bytes.get(i + 1..i + 4).and_then(|digits| {
            let text = std::str::from_utf8(digits).ok()?;
            u8::from_str_radix(text, 8).ok()
        });
        match (bytes[i], code) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_give_mount_point_type_and_options() {
        let text =
            "30 25 0:26 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory\n\
                    99 20 0:50 / /var/lib/a\\040b rw - tmpfs tmpfs rw,size=1024k\n\
                    garbage\n";
        let mounts = parse(text);
        assert_eq!(mounts.len(), 2);
        assert_eq!(
            mounts[0].mount_point,
            PathBuf::from("/sys/fs/cgroup/memory")
        );
        assert_eq!(mounts[0].fs_type, "cgroup");
        assert_eq!(mounts[0].super_options, "rw,memory");
        assert!(is_mounted(&mounts, Path::new("/var/lib/a b"), "tmpfs"));
        assert!(!is_mounted(&mounts, Path::new("/var/lib/a b"), "cgroup"));
    }

    #[test]
    fn this_process_sees_its_root_mount() {
        let mounts = mounts().expect("mountinfo");
        assert!(mounts.iter().any(|m| m.mount_point == Path::new("/")));
    }
}
