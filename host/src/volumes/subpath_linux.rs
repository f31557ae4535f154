//! subPath mounts, the Linux part: [`prepare_sub_paths`] resolves each of a container's
//! subPaths inside its volume, creates a missing one as a directory, and bind-mounts the
//! opened result at the container's mount point, after unmounting and removing the
//! container's earlier ones; [`clear_pod_mount_points`] unmounts and removes all of a pod's
//! at its teardown. Blocking file-system and mount calls: the pod actor runs them through
//! [`crate::pod::file_work`] ([`super::sub_paths_reach`] says where).
//!
//! Resolution uses `openat2(2)` with `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS` from the opened
//! volume directory. The kernel then follows the links that stay inside the volume (a
//! configMap key is `key -> ..data/key`, `..data -> ..<timestamp>`) and refuses, with `EXDEV`,
//! anything that would leave it: `..` above the root, an absolute link, a link to `/`. One
//! call does it atomically against concurrent renames (the kernel answers `EAGAIN` when a
//! rename could have changed the answer; that is retried a few times). A walk of our own
//! with `O_NOFOLLOW` would have to re-implement link resolution to keep in-volume links
//! working, and would be the place for the bugs upstream had. openat2 came in Linux 5.6; on
//! an older kernel every subPath is refused (`ENOSYS`), never resolved less safely.

use std::ffi::OsStr;
use std::io::ErrorKind;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{open, openat2, AtFlags, OFlag, OpenHow, ResolveFlag};
use nix::mount::{umount2, MntFlags, MsFlags};
use nix::sys::stat::{fchmod, fstat, fstatat, mkdirat, Mode, SFlag};
use nix::sys::statvfs::{statvfs, FsFlags};

use sergeant_core::volumes::{SubPathError, SubPathMount, SubPathReason, VOLUME_SUBPATHS_DIR};

use super::error::VolumeFileError;

/// How often a resolution the kernel asks to retry (`EAGAIN`) is tried again.
const RESOLVE_TRIES: usize = 8;
/// The most mounts stacked on one mount point that [`unmount_all`] removes.
const MAX_STACKED_MOUNTS: usize = 16;
/// The mode of the node's own mount-point directories: only root uses them.
const MOUNT_POINT_DIR_MODE: u32 = 0o750;

/// Makes every subPath mount of one container real, in order: first the container's earlier
/// mount points are unmounted and removed (a new instance resolves its subPaths again, as a
/// link may have changed), then each subPath is resolved inside its volume (created as a
/// directory with the volume's permissions when missing) and bind-mounted, read-only when the
/// mount is. On a failure the mount points made so far are removed again.
///
/// # Errors
///
/// The first refused mount, naming pod, field, subPath and reason.
pub fn prepare_sub_paths(mounts: &[SubPathMount]) -> Result<(), SubPathError> {
    for mount in mounts {
        if let Some(dir) = mount.mount_point.parent() {
            clear_mount_points(dir)
                .map_err(|left| mount.refused(SubPathReason::Node(left.to_string())))?;
        }
    }
    for mount in mounts {
        if let Err(reason) = bind(mount) {
            for dir in mounts.iter().filter_map(|m| m.mount_point.parent()) {
                if let Err(left) = clear_mount_points(dir) {
                    tracing::warn!("subPath mount points left after a failure: {left}");
                }
            }
            return Err(mount.refused(reason));
        }
        tracing::debug!(
            pod = mount.pod,
            field = mount.field,
            mount_point = %mount.mount_point.display(),
            "subPath bound"
        );
    }
    Ok(())
}

/// Unmounts and removes every subPath mount point of the pod whose directory is `pod_dir`:
/// the whole `volume-subpaths` tree, entry by entry and never recursively, so a bind mount of
/// a host directory that could not be unmounted is an error here, not something deleted
/// through. Unmounting goes by path (`umount2`), so it does not depend on how
/// `/proc/self/mountinfo` spells the pod directory. A pod without one is fine.
///
/// # Errors
///
/// [`VolumeFileError`] naming what could not be unmounted, read or removed.
pub(crate) fn clear_pod_mount_points(pod_dir: &Path) -> Result<(), VolumeFileError> {
    let base = pod_dir.join(VOLUME_SUBPATHS_DIR);
    for volume in entries(&base)? {
        for container in entries(&volume)? {
            clear_mount_points(&container)?;
        }
        remove_empty_dir(&volume)?;
    }
    remove_empty_dir(&base)
}

/// The paths in directory `dir`; none when it does not exist.
fn entries(dir: &Path) -> Result<Vec<PathBuf>, VolumeFileError> {
    match std::fs::read_dir(dir) {
        Ok(found) => found
            .map(|entry| entry.map(|e| e.path()).map_err(VolumeFileError::io(dir)))
            .collect(),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(VolumeFileError::io(dir)(e)),
    }
}

/// Removes the empty directory `dir` if it is there.
fn remove_empty_dir(dir: &Path) -> Result<(), VolumeFileError> {
    match std::fs::remove_dir(dir) {
        Err(e) if e.kind() != ErrorKind::NotFound => Err(VolumeFileError::io(dir)(e)),
        _ => Ok(()),
    }
}

/// Unmounts everything mounted on the entries of `dir` (one container's mount points of one
/// volume) and removes them and `dir`. A missing `dir` is fine. Nothing is removed
/// recursively: an entry still mounted stays, and is an error.
///
/// # Errors
///
/// [`VolumeFileError`] naming what could not be unmounted or removed.
fn clear_mount_points(dir: &Path) -> Result<(), VolumeFileError> {
    for path in entries(dir)? {
        unmount_all(&path)?;
        let is_dir = std::fs::symlink_metadata(&path)
            .map_err(VolumeFileError::io(&path))?
            .is_dir();
        let removed = if is_dir {
            std::fs::remove_dir(&path)
        } else {
            std::fs::remove_file(&path)
        };
        removed.map_err(VolumeFileError::io(&path))?;
    }
    remove_empty_dir(dir)
}

/// Unmounts every mount stacked on `path`, without following a link.
fn unmount_all(path: &Path) -> Result<(), VolumeFileError> {
    for _ in 0..MAX_STACKED_MOUNTS {
        match umount2(path, MntFlags::UMOUNT_NOFOLLOW) {
            Ok(()) => {}
            Err(Errno::EINVAL | Errno::ENOENT) => return Ok(()),
            Err(errno) => {
                return Err(VolumeFileError::UnmountSubPath {
                    path: path.to_path_buf(),
                    errno,
                })
            }
        }
    }
    Err(VolumeFileError::StillMounted {
        path: path.to_path_buf(),
        unmounts: MAX_STACKED_MOUNTS,
    })
}

/// Resolves one subPath and bind-mounts the opened result at its mount point.
fn bind(mount: &SubPathMount) -> Result<(), SubPathReason> {
    // The volume's own path is followed as the runtime would follow it without a subPath;
    // nothing below it is.
    let root = open(
        &mount.volume_root,
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| node_error(&mount.volume_root, "opening the volume", errno))?;
    let target = match beneath(&root, &mount.sub_path, OFlag::O_PATH) {
        Err(Errno::ENOENT) => create_dirs(mount, &root)?,
        resolved => resolved.map_err(|errno| resolve_error(mount, errno))?,
    };
    let stat = fstat(&target).map_err(|errno| node_error(&mount.mount_point, "fstat", errno))?;
    let is_dir = SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFDIR;
    make_mount_point(&mount.mount_point, is_dir)?;
    let source = format!("/proc/self/fd/{}", target.as_raw_fd());
    nix::mount::mount(
        Some(source.as_str()),
        &mount.mount_point,
        None::<&str>,
        MsFlags::MS_BIND,
        None::<&str>,
    )
    .map_err(|errno| node_error(&mount.mount_point, "bind-mounting the subPath", errno))?;
    let bound = std::fs::symlink_metadata(&mount.mount_point)
        .map_err(|e| node_io(&mount.mount_point, e))?;
    if (bound.dev(), bound.ino()) != (stat.st_dev, stat.st_ino) {
        // Cannot happen short of a kernel surprise; never hand the runtime something else.
        let _ = unmount_all(&mount.mount_point);
        return Err(SubPathReason::Node(format!(
            "{}: the bind mount does not show the resolved file",
            mount.mount_point.display()
        )));
    }
    if mount.read_only {
        remount_read_only(&mount.mount_point)?;
    }
    Ok(())
}

/// Opens `path` below `root` (a relative path of plain names) without ever leaving `root`,
/// following the links that stay inside it. `EAGAIN` is retried a few times.
fn beneath(root: &OwnedFd, path: &Path, flags: OFlag) -> Result<OwnedFd, Errno> {
    let how = OpenHow::new()
        .flags(flags | OFlag::O_CLOEXEC)
        .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_MAGICLINKS);
    let mut last = Errno::EAGAIN;
    for _ in 0..RESOLVE_TRIES {
        match openat2(root.as_fd(), path, how) {
            Err(Errno::EAGAIN) => last = Errno::EAGAIN,
            done => return done,
        }
    }
    Err(last)
}

/// Creates the missing directories of `path` below `root` (as upstream, a missing subPath is
/// a directory), never following a link: the existing part is resolved as any subPath is,
/// and each new directory is opened with `O_NOFOLLOW` after `mkdirat`, so a link put there
/// meanwhile is refused. New directories get the volume root's permission bits, set with
/// `fchmod` so the umask does not change them. Returns the last directory, opened.
fn create_dirs(mount: &SubPathMount, root: &OwnedFd) -> Result<OwnedFd, SubPathReason> {
    let root_stat = fstat(root).map_err(|errno| SubPathReason::Node(errno.desc().to_owned()))?;
    let mode = Mode::from_bits_truncate(root_stat.st_mode & 0o7777);
    let no_follow = OpenHow::new()
        .flags(OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC)
        .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_SYMLINKS);
    let mut parent = root
        .try_clone()
        .map_err(|e| SubPathReason::Node(sergeant_core::spec::io_reason(&e)))?;
    let mut prefix = PathBuf::new();
    let mut creating = false;
    for component in mount.sub_path.components() {
        let Component::Normal(name) = component else {
            // `clean_sub_path` made it plain names; anything else is refused, never walked.
            return Err(SubPathReason::Backstep);
        };
        prefix.push(name);
        if !creating {
            match beneath(root, &prefix, OFlag::O_PATH | OFlag::O_DIRECTORY) {
                Ok(dir) => {
                    parent = dir;
                    continue;
                }
                Err(Errno::ENOENT) => creating = true,
                Err(errno) => return Err(resolve_error(mount, errno)),
            }
        }
        let made = match mkdirat(parent.as_fd(), name, mode) {
            Ok(()) => true,
            Err(Errno::EEXIST) => false,
            Err(errno) => return Err(create_error(name, errno)),
        };
        let dir = openat2(parent.as_fd(), name, no_follow).map_err(|errno| match errno {
            // `O_NOFOLLOW | O_DIRECTORY` on a link: ENOTDIR (or ELOOP); tell which it was.
            Errno::ENOTDIR | Errno::ELOOP if is_link(&parent, name) => SubPathReason::LinkInTheWay,
            other => resolve_error(mount, other),
        })?;
        if made {
            fchmod(&dir, mode).map_err(|errno| create_error(name, errno))?;
        }
        parent = dir;
    }
    Ok(parent)
}

/// Whether `name` in `dir` is a symbolic link (not followed), for a precise error.
fn is_link(dir: &OwnedFd, name: &OsStr) -> bool {
    fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW)
        .is_ok_and(|stat| SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFLNK)
}

/// Creates the node's mount point: its parents, then an empty directory or file as the
/// resolved file is a directory or not.
fn make_mount_point(path: &Path, is_dir: bool) -> Result<(), SubPathReason> {
    if let Some(parent) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(MOUNT_POINT_DIR_MODE)
            .create(parent)
            .map_err(|e| node_io(parent, e))?;
    }
    let made = if is_dir {
        std::fs::DirBuilder::new()
            .mode(MOUNT_POINT_DIR_MODE)
            .create(path)
    } else {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .map(drop)
    };
    made.map_err(|e| node_io(path, e))
}

/// Makes the bind mount at `path` read-only, keeping the flags it has (`nosuid`, `nodev`,
/// `noexec`, atime): a bind remount sets them all at once.
fn remount_read_only(path: &Path) -> Result<(), SubPathReason> {
    let now = statvfs(path).map_err(|errno| node_error(path, "statvfs", errno))?;
    let kept = [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ]
    .into_iter()
    .filter(|(has, _)| now.flags().contains(*has))
    .fold(MsFlags::empty(), |flags, (_, flag)| flags | flag);
    nix::mount::mount(
        None::<&str>,
        path,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | kept,
        None::<&str>,
    )
    .map_err(|errno| {
        let _ = unmount_all(path);
        node_error(path, "remounting read-only", errno)
    })
}

/// Why resolving (part of) the subPath of `mount` failed.
fn resolve_error(mount: &SubPathMount, errno: Errno) -> SubPathReason {
    match errno {
        Errno::EXDEV => SubPathReason::Escapes {
            volume: mount.volume.clone(),
        },
        Errno::ELOOP => SubPathReason::TooManyLinks,
        Errno::ENOTDIR => SubPathReason::NotADirectory,
        Errno::EAGAIN => SubPathReason::Changing,
        other => SubPathReason::Node(other.desc().to_owned()),
    }
}

fn create_error(name: &OsStr, errno: Errno) -> SubPathReason {
    SubPathReason::Node(format!(
        "creating {:?}: {}",
        name.to_string_lossy(),
        errno.desc()
    ))
}

fn node_error(path: &Path, what: &str, errno: Errno) -> SubPathReason {
    SubPathReason::Node(format!("{}: {what}: {}", path.display(), errno.desc()))
}

/// An I/O error on `path` as a refusal's reason, naming the path.
fn node_io(path: &Path, error: std::io::Error) -> SubPathReason {
    SubPathReason::Node(VolumeFileError::io(path)(error).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sergeant_core::volumes::Reach;
    use std::os::unix::fs::{symlink, PermissionsExt};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    /// A volume directory holding every kind of link a container can make, and a pod
    /// directory for the mount points. Real mounts: the tests run as root.
    struct Fixture {
        dir: tempfile::TempDir,
        volume: PathBuf,
        pod_dir: PathBuf,
    }

    impl Fixture {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            let volume = dir.path().join("pod/volumes/kubernetes.io~empty-dir/data");
            std::fs::create_dir_all(volume.join("sub/dir")).unwrap();
            std::fs::set_permissions(&volume, std::fs::Permissions::from_mode(0o2775)).unwrap();
            std::fs::write(volume.join("sub/dir/file"), "inside").unwrap();
            std::fs::write(dir.path().join("outside"), "host").unwrap();
            // configMap layout: key -> ..data/key, ..data -> ..<timestamp>.
            std::fs::create_dir(volume.join("..2024_01_01")).unwrap();
            std::fs::write(volume.join("..2024_01_01/key"), "value").unwrap();
            let links = [
                ("..data", "..2024_01_01"),
                ("key", "..data/key"),
                ("inner", "sub/dir"),
                ("sub/back", "../sub/dir"),
                ("root", "/"),
                ("up", ".."),
                ("l1", "l2"),
                ("l2", "sub/l3"),
                ("sub/l3", "../../.."),
                ("out-and-back", "../data/sub"),
                ("loop", "loop"),
                ("dangling", "nothing"),
                ("magic", "/proc/self/root"),
            ];
            for (link, target) in links {
                symlink(target, volume.join(link)).unwrap();
            }
            symlink(dir.path(), volume.join("absolute")).unwrap();
            let pod_dir = dir.path().join("pod");
            Self {
                dir,
                volume,
                pod_dir,
            }
        }

        fn mount(&self, index: usize, given: &str, read_only: bool) -> SubPathMount {
            SubPathMount {
                pod: "ns/web".into(),
                field: format!("spec.containers[0].volumeMounts[{index}].subPath"),
                given: given.into(),
                volume: "data".into(),
                volume_root: self.volume.clone(),
                sub_path: PathBuf::from(given),
                mount_point: self.container_dir().join(index.to_string()),
                read_only,
                reach: Reach::Own,
            }
        }

        fn container_dir(&self) -> PathBuf {
            self.pod_dir.join("volume-subpaths/data/app")
        }

        fn refused(&self, given: &str) -> SubPathReason {
            let error = prepare_sub_paths(&[self.mount(0, given, false)]).unwrap_err();
            assert!(
                !self.container_dir().exists(),
                "nothing is left mounted after refusing {given:?}"
            );
            error.reason
        }
    }

    impl Drop for Fixture {
        fn drop(&mut self) {
            let _ = clear_mount_points(&self.container_dir());
        }
    }

    fn same_file(a: &Path, b: &Path) -> bool {
        let (a, b) = (std::fs::metadata(a).unwrap(), std::fs::metadata(b).unwrap());
        (a.dev(), a.ino()) == (b.dev(), b.ino())
    }

    fn mounted(path: &Path) -> bool {
        crate::mountinfo::mounts()
            .unwrap()
            .iter()
            .any(|m| m.mount_point == path)
    }

    #[test]
    fn links_inside_the_volume_are_followed_and_bound() {
        let f = Fixture::new();
        let mounts = [
            f.mount(0, "sub/dir", false),
            f.mount(1, "key", false),
            f.mount(2, "inner", false),
            f.mount(3, "sub/back", false),
        ];
        prepare_sub_paths(&mounts).unwrap();
        let point = |i: usize| mounts[i].mount_point.clone();
        assert!(mounted(&point(0)) && point(0).is_dir());
        assert_eq!(
            std::fs::read_to_string(point(0).join("file")).unwrap(),
            "inside"
        );
        // The configMap key: the bind mount is the file its two links lead to.
        assert!(mounted(&point(1)) && point(1).is_file());
        assert!(same_file(&point(1), &f.volume.join("..2024_01_01/key")));
        assert_eq!(std::fs::read_to_string(point(1)).unwrap(), "value");
        assert!(same_file(&point(2), &f.volume.join("sub/dir")));
        assert!(same_file(&point(3), &f.volume.join("sub/dir")));
        // The bind mount is writable like the volume, and shows the volume's file.
        std::fs::write(point(0).join("new"), "x").unwrap();
        assert!(f.volume.join("sub/dir/new").is_file());

        // A new instance binds again: the old mount points go first, nothing stacks.
        prepare_sub_paths(&mounts[..1]).unwrap();
        assert!(mounted(&point(0)));
        assert!(!point(1).exists() && !mounted(&point(1)));
        let stacked = crate::mountinfo::mounts()
            .unwrap()
            .iter()
            .filter(|m| m.mount_point == point(0))
            .count();
        assert_eq!(stacked, 1);
        clear_mount_points(&f.container_dir()).unwrap();
        assert!(!mounted(&point(0)) && !f.container_dir().exists());
        assert!(
            f.volume.join("sub/dir/file").is_file(),
            "the volume is kept"
        );
    }

    #[test]
    fn links_out_of_the_volume_are_refused() {
        let f = Fixture::new();
        let escapes = SubPathReason::Escapes {
            volume: "data".into(),
        };
        for given in [
            "root",
            "root/etc",
            "up",
            "up/data",
            "absolute",
            "l1",
            "out-and-back",
            "magic",
            "root/new-dir",
        ] {
            assert_eq!(f.refused(given), escapes, "{given}");
        }
        assert!(
            !Path::new("/new-dir").exists(),
            "nothing was created outside"
        );
        assert_eq!(f.refused("loop"), SubPathReason::TooManyLinks);
        assert_eq!(f.refused("sub/dir/file/x"), SubPathReason::NotADirectory);
        assert_eq!(f.refused("dangling"), SubPathReason::LinkInTheWay);
        assert_eq!(f.refused("dangling/x"), SubPathReason::LinkInTheWay);
        assert!(!f.dir.path().join("nothing").exists());
        let error = prepare_sub_paths(&[f.mount(2, "root", false)])
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "pod ns/web: spec.containers[0].volumeMounts[2].subPath: \"root\" leads out of \
             volume \"data\" through a symbolic link"
        );
    }

    #[test]
    fn a_refusal_removes_the_mount_points_made_before_it() {
        let f = Fixture::new();
        let mounts = [f.mount(0, "sub/dir", false), f.mount(1, "root", false)];
        let error = prepare_sub_paths(&mounts).unwrap_err();
        assert_eq!(error.field, "spec.containers[0].volumeMounts[1].subPath");
        assert!(!mounted(&mounts[0].mount_point));
        assert!(!f.container_dir().exists());
    }

    #[test]
    fn a_missing_sub_path_is_created_with_the_volumes_permissions() {
        let f = Fixture::new();
        let mounts = [
            f.mount(0, "new/deeper", false),
            f.mount(1, "inner/made", false),
        ];
        prepare_sub_paths(&mounts).unwrap();
        for made in ["new", "new/deeper", "sub/dir/made"] {
            let meta = std::fs::symlink_metadata(f.volume.join(made)).unwrap();
            assert!(meta.is_dir(), "{made}");
            assert_eq!(meta.permissions().mode() & 0o7777, 0o2775, "{made}");
        }
        assert!(same_file(
            &mounts[0].mount_point,
            &f.volume.join("new/deeper")
        ));
        assert!(same_file(
            &mounts[1].mount_point,
            &f.volume.join("sub/dir/made")
        ));
    }

    #[test]
    fn a_read_only_mount_is_read_only_on_the_node() {
        let f = Fixture::new();
        let mounts = [f.mount(0, "sub/dir", true), f.mount(1, "key", true)];
        prepare_sub_paths(&mounts).unwrap();
        let error = std::fs::write(mounts[0].mount_point.join("x"), "x").unwrap_err();
        assert_eq!(error.raw_os_error(), Some(libc_erofs()));
        let error = std::fs::write(&mounts[1].mount_point, "x").unwrap_err();
        assert_eq!(error.raw_os_error(), Some(libc_erofs()));
        assert_eq!(
            std::fs::read_to_string(&mounts[1].mount_point).unwrap(),
            "value"
        );
        // The volume itself stays writable.
        std::fs::write(f.volume.join("sub/dir/x"), "x").unwrap();
    }

    fn libc_erofs() -> i32 {
        Errno::EROFS as i32
    }

    /// A link flipped between a directory inside and `/` while the subPath is bound again
    /// and again: each bind shows the directory inside, or is refused; never the host.
    #[test]
    fn a_link_swapped_during_resolution_never_escapes() {
        let f = Fixture::new();
        symlink("sub/dir", f.volume.join("flip")).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flipper = {
            let (volume, stop) = (f.volume.clone(), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut flips = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    for target in ["sub/dir", "/"] {
                        let tmp = volume.join("flip.tmp");
                        let _ = std::fs::remove_file(&tmp);
                        symlink(target, &tmp).unwrap();
                        std::fs::rename(&tmp, volume.join("flip")).unwrap();
                        flips += 1;
                    }
                }
                flips
            })
        };
        let mount = f.mount(0, "flip", false);
        let (mut bound, mut refused) = (0, 0);
        for _ in 0..2000 {
            match prepare_sub_paths(std::slice::from_ref(&mount)) {
                Ok(()) => {
                    bound += 1;
                    assert!(
                        mount.mount_point.join("file").is_file(),
                        "the bind mount shows the directory inside"
                    );
                    assert!(!mount.mount_point.join("proc").exists());
                }
                Err(error) => {
                    refused += 1;
                    assert_eq!(
                        error.reason,
                        SubPathReason::Escapes {
                            volume: "data".into()
                        }
                    );
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        let flips = flipper.join().unwrap();
        assert!(bound > 0 && refused > 0, "{bound} bound, {refused} refused");
        assert!(flips > 100, "{flips} flips");
    }
}
