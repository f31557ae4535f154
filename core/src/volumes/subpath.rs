//! subPath mounts, the pure part: the rules a `subPath` (or an expanded `subPathExpr`) must
//! follow ([`clean_sub_path`]), where its bind mount lives on the node ([`mount_point`]), what
//! one planned subPath mount is ([`SubPathMount`], made by [`SubPathMount::plan`]) and why one
//! is refused ([`SubPathError`]). [`super::subpath_linux`] executes the plan.
//!
//! A subPath is never handed to the runtime as `<volume>/<subPath>`: the runtime would follow
//! any symbolic link a container put in the volume, out of it (CVE-2017-1002101). The node
//! resolves it inside the volume without following a link out, holds the result open, and
//! bind-mounts exactly that file at a mount point of its own under the pod's directory,
//! `<pod dir>/volume-subpaths/<volume>/<container>/<mount index>`, as upstream does; the
//! runtime gets that path. A link swapped in between the check and the mount changes nothing,
//! because the mount is made from the opened file, not from a path.

use std::path::{Component, Path, PathBuf};

use super::{PlannedSource, PlannedVolume};
use crate::volumes::Reach;

/// The directory below the pod directory that holds its subPath bind mounts (upstream's
/// layout, so node tools find them).
pub const VOLUME_SUBPATHS_DIR: &str = "volume-subpaths";

/// The longest subPath taken, in bytes: the kernel's `PATH_MAX`, so the cost of resolving one
/// is bounded whatever the pod says.
const MAX_SUB_PATH_BYTES: usize = 4096;

/// One `volumeMounts[j]` of a container that has a subPath: what to resolve, inside which
/// volume, and where to bind the result. Planned without I/O by [`SubPathMount::plan`], made
/// real by [`super::prepare_sub_paths`] before the container is created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubPathMount {
    /// `namespace/name` of the pod, for errors.
    pub pod: String,
    /// The field it comes from: `spec.containers[i].volumeMounts[j].subPath` (or
    /// `subPathExpr`).
    pub field: String,
    /// The subPath as the spec gave it (after `subPathExpr` expansion), for errors.
    pub given: String,
    /// The volume's name.
    pub volume: String,
    /// The volume's directory on the node, the root nothing may be resolved out of.
    pub volume_root: PathBuf,
    /// The subPath, relative, made only of plain names.
    pub sub_path: PathBuf,
    /// Where the resolved file is bind-mounted; the runtime mounts this path.
    pub mount_point: PathBuf,
    /// Whether the bind mount is read-only.
    pub read_only: bool,
    /// Where resolving it reaches: the host for a hostPath volume.
    pub reach: Reach,
}

impl SubPathMount {
    /// The subPath mount of `volume_mounts[index]` of `container` on `volume` (called `name`)
    /// of the pod with directory `pod_dir`; `None` when `given` names the whole volume (empty,
    /// or only `.`). `container` must be usable as a directory name.
    ///
    /// # Errors
    ///
    /// Why `given` breaks the subPath rules ([`clean_sub_path`]).
    #[allow(clippy::too_many_arguments)]
    pub fn plan(
        pod: &str,
        field: String,
        pod_dir: &Path,
        name: &str,
        volume: &PlannedVolume,
        container: &str,
        index: usize,
        given: &str,
        read_only: bool,
    ) -> Result<Option<SubPathMount>, SubPathReason> {
        let Some(sub_path) = clean_sub_path(given)? else {
            return Ok(None);
        };
        let reach = match volume.source {
            PlannedSource::HostPath(_) => Reach::Host,
            PlannedSource::EmptyDir { .. } | PlannedSource::Api(_) => Reach::Own,
        };
        Ok(Some(SubPathMount {
            pod: pod.to_owned(),
            field,
            given: given.to_owned(),
            volume: name.to_owned(),
            volume_root: volume.host_path.clone(),
            sub_path,
            mount_point: mount_point(pod_dir, name, container, index),
            read_only,
            reach,
        }))
    }

    /// The error refusing this mount for `reason`.
    #[must_use]
    pub fn refused(&self, reason: SubPathReason) -> SubPathError {
        SubPathError {
            pod: self.pod.clone(),
            field: self.field.clone(),
            given: self.given.clone(),
            reason,
        }
    }
}

/// How far preparing `mounts` reaches: to the host when one is on a hostPath volume.
#[must_use]
pub fn sub_paths_reach(mounts: &[SubPathMount]) -> Reach {
    if mounts.iter().any(|m| m.reach == Reach::Host) {
        Reach::Host
    } else {
        Reach::Own
    }
}

/// `given` as a relative path of plain names (`a/./b//c/` → `a/b/c`); `None` when it names
/// the whole volume (empty or only `.`).
///
/// # Errors
///
/// [`SubPathReason::Absolute`], [`SubPathReason::Backstep`] for a `..` component (upstream
/// refuses those too, even when they would stay inside), [`SubPathReason::Nul`],
/// [`SubPathReason::TooLong`].
pub fn clean_sub_path(given: &str) -> Result<Option<PathBuf>, SubPathReason> {
    if given.len() > MAX_SUB_PATH_BYTES {
        return Err(SubPathReason::TooLong);
    }
    if given.contains('\0') {
        return Err(SubPathReason::Nul);
    }
    let mut clean = PathBuf::new();
    for component in Path::new(given).components() {
        match component {
            Component::Normal(name) => clean.push(name),
            Component::CurDir => {}
            Component::ParentDir => return Err(SubPathReason::Backstep),
            Component::RootDir | Component::Prefix(_) => return Err(SubPathReason::Absolute),
        }
    }
    Ok((!clean.as_os_str().is_empty()).then_some(clean))
}

/// `<pod_dir>/volume-subpaths/<volume>/<container>/<index>`: where the subPath of the
/// container's `index`-th volume mount on `volume` is bind-mounted. `volume` and `container`
/// must be plain names (checked by the volume plan and the caller).
#[must_use]
pub fn mount_point(pod_dir: &Path, volume: &str, container: &str, index: usize) -> PathBuf {
    pod_dir
        .join(VOLUME_SUBPATHS_DIR)
        .join(volume)
        .join(container)
        .join(index.to_string())
}

/// Why a subPath is refused. The text follows the quoted subPath in messages.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubPathReason {
    /// It starts at `/`.
    #[error("is an absolute path; a subPath is relative to its volume")]
    Absolute,
    /// It has a `..` component.
    #[error("has a '..' component; a subPath must stay inside its volume")]
    Backstep,
    /// It holds a NUL byte, which no path can.
    #[error("holds a NUL byte")]
    Nul,
    /// It is longer than a path can be.
    #[error("is longer than {MAX_SUB_PATH_BYTES} bytes")]
    TooLong,
    /// Resolving it inside the volume left the volume: a symbolic link on the way points to
    /// `/`, above the volume or to an absolute path.
    #[error("leads out of volume {volume:?} through a symbolic link")]
    Escapes {
        /// The volume's name.
        volume: String,
    },
    /// A symbolic link loop, more links than the kernel follows, or a `/proc` magic link.
    #[error("goes through a symbolic link loop, too many symbolic links or a magic link")]
    TooManyLinks,
    /// A component on the way is a file, not a directory.
    #[error("has a component that is not a directory")]
    NotADirectory,
    /// Where a missing directory was to be created there is a symbolic link (pointing to
    /// nothing, or put there meanwhile); it is not followed.
    #[error("cannot be created: a symbolic link is in the way")]
    LinkInTheWay,
    /// The volume kept changing while it was resolved (the kernel asked to retry, too often).
    #[error("kept changing while it was resolved")]
    Changing,
    /// The volume, the subPath or the node's mount point failed otherwise (the text says
    /// what, where and why).
    #[error("{0}")]
    Node(String),
}

impl SubPathReason {
    /// A short name for the `reason` label of `sergeant_subpath_failures_total`.
    #[must_use]
    pub fn label(&self) -> &'static str {
        match self {
            SubPathReason::Absolute => "absolute",
            SubPathReason::Backstep => "backstep",
            SubPathReason::Nul => "nul",
            SubPathReason::TooLong => "too_long",
            SubPathReason::Escapes { .. } => "escapes",
            SubPathReason::TooManyLinks => "too_many_links",
            SubPathReason::NotADirectory => "not_a_directory",
            SubPathReason::LinkInTheWay => "link_in_the_way",
            SubPathReason::Changing => "changing",
            SubPathReason::Node(_) => "node",
        }
    }
}

/// A subPath mount refused for one container: the pod, the field, the subPath and why. The
/// container waits with `CreateContainerConfigError` and this message; nothing else of the
/// pod or the node is touched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("pod {pod}: {field}: {given:?} {reason}")]
pub struct SubPathError {
    /// `namespace/name` of the pod.
    pub pod: String,
    /// `spec.containers[i].volumeMounts[j].subPath` (or `subPathExpr`).
    pub field: String,
    /// The subPath as given (expanded).
    pub given: String,
    /// Why it is refused.
    pub reason: SubPathReason,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::volumes::HostPathType;

    fn clean(given: &str) -> Result<Option<String>, SubPathReason> {
        clean_sub_path(given).map(|p| p.map(|p| p.display().to_string()))
    }

    #[test]
    fn sub_paths_are_relative_plain_names() {
        assert_eq!(clean("a"), Ok(Some("a".into())));
        assert_eq!(clean("a/./b//c/"), Ok(Some("a/b/c".into())));
        assert_eq!(clean("./a"), Ok(Some("a".into())));
        assert_eq!(clean("..data/key"), Ok(Some("..data/key".into())));
        assert_eq!(clean("..."), Ok(Some("...".into())));
        assert_eq!(clean(""), Ok(None));
        assert_eq!(clean("."), Ok(None));
        assert_eq!(clean("./."), Ok(None));
    }

    #[test]
    fn sub_paths_that_leave_or_cannot_be_paths_are_refused() {
        assert_eq!(clean("/etc"), Err(SubPathReason::Absolute));
        assert_eq!(clean("//etc"), Err(SubPathReason::Absolute));
        assert_eq!(clean(".."), Err(SubPathReason::Backstep));
        assert_eq!(clean("../etc"), Err(SubPathReason::Backstep));
        assert_eq!(clean("a/../../etc"), Err(SubPathReason::Backstep));
        // Upstream refuses a backstep even when it would stay inside.
        assert_eq!(clean("a/../b"), Err(SubPathReason::Backstep));
        assert_eq!(clean("a/.."), Err(SubPathReason::Backstep));
        assert_eq!(clean("a\0b"), Err(SubPathReason::Nul));
        assert_eq!(clean(&"a/".repeat(2049)), Err(SubPathReason::TooLong));
        assert!(clean(&"a/".repeat(2048)).is_ok());
    }

    #[test]
    fn mount_points_follow_upstreams_layout() {
        assert_eq!(
            mount_point(Path::new("/r/pods/u"), "data", "app", 3),
            PathBuf::from("/r/pods/u/volume-subpaths/data/app/3")
        );
    }

    #[test]
    fn a_plan_names_its_field_and_reaches_the_host_only_for_host_paths() {
        let volume = |source| PlannedVolume {
            host_path: PathBuf::from("/v"),
            is_memory: false,
            read_only: false,
            source,
        };
        let plan = |v: &PlannedVolume, given: &str| {
            SubPathMount::plan(
                "ns/web",
                "spec.containers[0].volumeMounts[1].subPath".into(),
                Path::new("/r/pods/u"),
                "data",
                v,
                "app",
                1,
                given,
                true,
            )
        };
        let empty = volume(PlannedSource::EmptyDir {
            size_limit_bytes: None,
        });
        let host = volume(PlannedSource::HostPath(HostPathType::Directory));
        let mount = plan(&empty, "./a//b").unwrap().unwrap();
        assert_eq!(mount.sub_path, PathBuf::from("a/b"));
        assert_eq!(mount.given, "./a//b");
        assert_eq!(mount.volume_root, PathBuf::from("/v"));
        assert_eq!(
            mount.mount_point,
            PathBuf::from("/r/pods/u/volume-subpaths/data/app/1")
        );
        assert!(mount.read_only);
        assert_eq!(mount.reach, Reach::Own);
        let on_host = plan(&host, "a").unwrap().unwrap();
        assert_eq!(on_host.reach, Reach::Host);
        assert_eq!(sub_paths_reach(std::slice::from_ref(&mount)), Reach::Own);
        assert_eq!(sub_paths_reach(&[mount.clone(), on_host]), Reach::Host);
        assert_eq!(sub_paths_reach(&[]), Reach::Own);
        assert_eq!(plan(&empty, "."), Ok(None));
        assert_eq!(plan(&empty, "../x"), Err(SubPathReason::Backstep));
        let error = mount.refused(SubPathReason::Escapes {
            volume: "data".into(),
        });
        assert_eq!(
            error.to_string(),
            "pod ns/web: spec.containers[0].volumeMounts[1].subPath: \"./a//b\" leads out of \
             volume \"data\" through a symbolic link"
        );
        assert_eq!(error.reason.label(), "escapes");
    }
}
