//! A pod's volume numbers, read from its directory on the node: every volume the node keeps
//! under `<pod dir>/volumes/<plugin>/<name>` (emptyDir, configMap, secret, downwardAPI,
//! projected) with its filesystem's size and what the volume uses of it, and the part of that
//! which is the pod's local ephemeral storage. hostPath volumes are the node's, not the pod's,
//! and are not reported, as upstream. Blocking; read with the rest of the host-side numbers.

use std::path::Path;

use super::clock::Clock;
use super::fs;
use crate::filesystem::device_of;
use sergeant_core::spec::HOSTS_FILE;
use sergeant_core::stats::summary::VolumeStats;
use sergeant_core::volumes::{counts_as_ephemeral_storage, VOLUMES_DIR};

/// What a pod's directory holds for the summary.
#[derive(Debug, Default)]
pub struct PodVolumes {
    /// One entry per volume, sorted by name.
    pub stats: Vec<VolumeStats>,
    /// What the disk-backed ephemeral volumes and the hosts file use: `(bytes, inodes)`.
    pub ephemeral: (u64, u64),
}

/// Reads the volumes under `pod_dir`. A missing directory has none; a volume that vanishes or
/// cannot be examined during the walk is left out.
#[must_use]
pub fn read(pod_dir: &Path, clock: Clock) -> PodVolumes {
    let Ok(pod_device) = std::fs::metadata(pod_dir).map(|m| device_of(&m)) else {
        return PodVolumes::default();
    };
    let mut volumes = PodVolumes {
        ephemeral: fs::usage(&pod_dir.join(HOSTS_FILE)),
        ..PodVolumes::default()
    };
    let plugins = std::fs::read_dir(pod_dir.join(VOLUMES_DIR));
    for plugin in plugins.into_iter().flatten().flatten() {
        let counts = plugin
            .file_name()
            .to_str()
            .is_some_and(counts_as_ephemeral_storage);
        for volume in std::fs::read_dir(plugin.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let path = volume.path();
            let Ok(filesystem) = fs::filesystem(&path, clock) else {
                continue;
            };
            let used = fs::usage(&path);
            // A memory emptyDir is a tmpfs mounted there: another device than the pod's.
            let on_disk = std::fs::metadata(&path).is_ok_and(|m| device_of(&m) == pod_device);
            if counts && on_disk {
                volumes.ephemeral.0 = volumes.ephemeral.0.saturating_add(used.0);
                volumes.ephemeral.1 = volumes.ephemeral.1.saturating_add(used.1);
            }
            volumes.stats.push(VolumeStats {
                name: volume.file_name().to_string_lossy().into_owned(),
                fs: fs::consumer(&filesystem, used),
            });
        }
    }
    volumes.stats.sort_by(|a, b| a.name.cmp(&b.name));
    volumes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_volume_is_reported_and_disk_backed_ones_count_as_ephemeral() {
        let pod = tempfile::tempdir().unwrap();
        let data = pod.path().join("volumes/kubernetes.io~empty-dir/data");
        let token = pod.path().join("volumes/kubernetes.io~projected/token");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::create_dir_all(&token).unwrap();
        std::fs::write(data.join("blob"), vec![b'x'; 128 * 1024]).unwrap();
        std::fs::write(token.join("token"), vec![b'y'; 64 * 1024]).unwrap();
        std::fs::write(pod.path().join(HOSTS_FILE), b"127.0.0.1 localhost\n").unwrap();

        let volumes = read(pod.path(), Clock::read());
        let names: Vec<&str> = volumes.stats.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["data", "token"]);
        let data_used = volumes.stats[0].fs.used_bytes.unwrap();
        assert!(data_used >= 128 * 1024, "{data_used}");
        assert_eq!(volumes.stats[0].fs.inodes_used, Some(2));
        assert!(volumes.stats[0].fs.capacity_bytes.unwrap() > 0);
        let token_used = volumes.stats[1].fs.used_bytes.unwrap();
        // The emptyDir and the hosts file count; the projected volume does not.
        let (bytes, inodes) = volumes.ephemeral;
        assert_eq!(inodes, 3);
        assert!(
            bytes >= data_used && bytes < data_used + token_used,
            "{bytes}"
        );
    }

    #[test]
    fn a_pod_without_a_directory_has_no_volumes() {
        let volumes = read(Path::new("/nonexistent/pod"), Clock::read());
        assert!(volumes.stats.is_empty());
        assert_eq!(volumes.ephemeral, (0, 0));
    }
}
