//! Filesystem numbers: a filesystem's size and free space (`statvfs`), and how much a
//! directory tree uses of it (like `du`). Blocking; run on a blocking thread.

use std::path::Path;

use crate::filesystem;

use super::clock::Clock;
use super::error::HostStatsError;
use sergeant_core::stats::summary::FsStats;

/// The size, free space and inodes of the filesystem holding `path`; `usedBytes` and
/// `inodesUsed` are the whole filesystem's.
///
/// # Errors
/// [`HostStatsError::Statvfs`] when `path` cannot be examined.
pub fn filesystem(path: &Path, clock: Clock) -> Result<FsStats, HostStatsError> {
    let space = filesystem::space(path).map_err(|source| HostStatsError::Statvfs {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(FsStats {
        time: clock.time(),
        available_bytes: Some(space.available_bytes),
        capacity_bytes: Some(space.total_bytes),
        used_bytes: Some(space.total_bytes.saturating_sub(space.free_bytes)),
        inodes_free: space.inodes_free,
        inodes: space.inodes,
        inodes_used: space
            .inodes
            .zip(space.inodes_free)
            .map(|(all, free)| all.saturating_sub(free)),
    })
}

/// The device of the filesystem holding `path`, to tell whether two paths are on one
/// filesystem; `None` when `path` cannot be examined. (Windows has one device for every path:
/// see [`filesystem::device_of`].)
#[must_use]
pub fn device(path: &Path) -> Option<u64> {
    std::fs::metadata(path)
        .ok()
        .map(|meta| filesystem::device_of(&meta))
}

/// Directory levels walked below the top one; deeper ones are not counted. The walk holds
/// one open directory per level: this bounds its file descriptors, and it keeps its levels on
/// the heap, not the stack, so a pod that nests directories thousands deep in a volume costs
/// neither the agent's descriptors nor its stack (the recursive walk this replaces held a
/// descriptor per level and, in a debug build, overflowed a 2 MiB thread stack at the two
/// thousand levels a path can reach, aborting the process).
const MAX_DEPTH: usize = 256;

/// What a directory tree occupies: `(bytes on disk, inodes)`, itself included, down to
/// [`MAX_DEPTH`] levels. Entries that vanish during the walk are skipped; a missing `dir`
/// uses nothing. Symbolic links are counted, not followed.
#[must_use]
pub fn usage(dir: &Path) -> (u64, u64) {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return (0, 0);
    };
    let mut bytes = filesystem::disk_bytes(&meta);
    let mut inodes: u64 = 1;
    let mut levels: Vec<std::fs::ReadDir> = if meta.is_dir() {
        std::fs::read_dir(dir).into_iter().collect()
    } else {
        Vec::new()
    };
    while let Some(level) = levels.last_mut() {
        let Some(entry) = level.next() else {
            levels.pop();
            continue;
        };
        // The entry's own metadata: a symbolic link is not followed.
        let Ok(meta) = entry.and_then(|e| e.metadata().map(|m| (e, m))) else {
            continue;
        };
        let (entry, meta) = meta;
        bytes = bytes.saturating_add(filesystem::disk_bytes(&meta));
        inodes = inodes.saturating_add(1);
        if meta.is_dir() && levels.len() < MAX_DEPTH {
            levels.extend(std::fs::read_dir(entry.path()));
        }
    }
    (bytes, inodes)
}

/// `filesystem`'s numbers for the fs, with `used` (bytes, inodes) as the consumer's part.
#[must_use]
pub fn consumer(fs: &FsStats, (bytes, inodes): (u64, u64)) -> FsStats {
    FsStats {
        used_bytes: Some(bytes),
        inodes_used: Some(inodes),
        ..fs.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filesystem_has_capacity_above_availability() {
        let dir = tempfile::tempdir().unwrap();
        let fs = filesystem(dir.path(), Clock::read()).unwrap();
        let capacity = fs.capacity_bytes.unwrap();
        assert!(capacity > 0);
        assert!(fs.available_bytes.unwrap() <= capacity);
        assert!(fs.used_bytes.unwrap() <= capacity);
        assert!(filesystem(&dir.path().join("missing"), Clock::read()).is_err());
        assert_eq!(device(dir.path()), device(&std::env::temp_dir()));
        assert_eq!(device(&dir.path().join("missing")), None);
    }

    #[test]
    fn usage_counts_files_and_directories() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("app")).unwrap();
        std::fs::write(dir.path().join("app/0.log"), vec![b'x'; 64 * 1024]).unwrap();
        let (bytes, inodes) = usage(dir.path());
        assert_eq!(inodes, 3);
        assert!(bytes >= 64 * 1024, "{bytes}");
        assert_eq!(usage(&dir.path().join("missing")), (0, 0));
    }

    #[test]
    fn a_deep_tree_is_walked_to_the_depth_bound_on_a_small_stack() {
        let dir = tempfile::tempdir().unwrap();
        let mut path = dir.path().to_path_buf();
        for _ in 0..MAX_DEPTH + 40 {
            path.push("d");
            std::fs::create_dir(&path).unwrap();
        }
        let root = dir.path().to_path_buf();
        let walk = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || usage(&root))
            .unwrap();
        let (_, inodes) = walk.join().expect("the walk fits a small stack");
        assert_eq!(inodes, 1 + MAX_DEPTH as u64);
    }
}
