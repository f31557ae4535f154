//! Making a pod's planned volumes real on the node, keeping the files of its API-backed volumes
//! current, and removing everything the node kept for the pod. All idempotent and blocking:
//! the pod actor runs setup through [`crate::pod::file_work`] (on the blocking pool when a
//! hostPath is involved) and removal, whose size has no bound, on the blocking pool.

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use sergeant_core::spec::{is_safe_path_component, NodeContext, SpecError};
use sergeant_core::volumes::{
    FileContent, Payload, PlannedSource, PlannedVolume, VolumeError, VolumeOwnership, VolumePlan,
    VOLUMES_DIR,
};

use super::atomic::write_payload;
use super::error::VolumeFileError;
use super::host_path::prepare_host_path;
use super::mounts::{mount_tmpfs, node_mounts, unmount};
use super::ownership;
use super::subpath::clear_pod_mount_points;
use crate::file_mode::set_mode;
use crate::mountinfo::{self, is_mounted, MountTableError};

/// emptyDir directories are writable by every user, so containers running as any UID can
/// use them.
const EMPTY_DIR_MODE: u32 = 0o777;

/// Creates the emptyDir directories (mounting a tmpfs on memory ones), checks or creates
/// hostPath paths as their type says, and writes the API-backed volumes from `payloads` (by
/// volume name; computed by [`super::api_payloads`]). Running it again changes nothing: a
/// tmpfs already mounted stays as it is.
///
/// # Errors
///
/// [`VolumeError`] naming the pod, the volume and the reason (with the path) when a directory
/// or tmpfs cannot be made, a hostPath is not what its type requires, or an API-backed volume
/// has no payload or cannot be written.
pub fn setup_volumes(
    plan: &VolumePlan,
    payloads: &BTreeMap<String, Payload>,
) -> Result<(), VolumeError> {
    let mounts = memory_mounts(plan)?;
    for (name, volume) in plan.iter() {
        let done = match volume.source {
            PlannedSource::EmptyDir { size_limit_bytes } => {
                make_empty_dir(volume, size_limit_bytes, &mounts)
                    .and_then(|()| hand_to_group(volume, plan.ownership, false))
            }
            PlannedSource::HostPath(kind) => prepare_host_path(kind, &volume.host_path),
            PlannedSource::Api(_) => {
                write_api_volume(volume, payloads.get(name), &mounts, plan.ownership)
            }
        };
        done.map_err(|error| failure(plan, name, volume, &error))?;
    }
    Ok(())
}

/// Writes the API-backed volumes that have a payload in `payloads` again where their content
/// changed (the others keep what they hold). Returns a [`VolumeError`] for each that could not
/// be written.
#[must_use]
pub fn refresh_api_volumes(
    plan: &VolumePlan,
    payloads: &BTreeMap<String, Payload>,
) -> Vec<VolumeError> {
    let mounts = match memory_mounts(plan) {
        Ok(mounts) => mounts,
        Err(error) => return vec![error],
    };
    plan.iter()
        .filter(|(name, v)| {
            matches!(v.source, PlannedSource::Api(_)) && payloads.contains_key(*name)
        })
        .filter_map(|(name, volume)| {
            write_api_volume(volume, payloads.get(name), &mounts, plan.ownership)
                .err()
                .map(|error| failure(plan, name, volume, &error))
        })
        .collect()
}

/// The node's mounts when the plan has memory volumes (to see which tmpfs exist already).
fn memory_mounts(plan: &VolumePlan) -> Result<Vec<mountinfo::MountEntry>, VolumeError> {
    let Some((name, volume)) = plan.iter().find(|(_, v)| v.is_memory) else {
        return Ok(Vec::new());
    };
    node_mounts().map_err(|error| failure(plan, name, volume, &error.into()))
}

/// The pod's [`VolumeError`] for `error` on `volume` (named `name` in the pod), whose reason
/// starts with the volume's path.
fn failure(
    plan: &VolumePlan,
    name: &str,
    volume: &PlannedVolume,
    error: &VolumeFileError,
) -> VolumeError {
    VolumeError {
        pod: plan.id.display.clone(),
        volume: name.to_owned(),
        kind: volume.source.type_name(),
        reason: format!("{}: {error}", volume.host_path.display()),
    }
}

/// The volume's directory (a tmpfs for memory ones) holding `payload`, handed to the pod's
/// `fsGroup` when it has one: its files are written group-readable already, so an unchanged
/// payload still matches what is on disk and nothing is rewritten.
fn write_api_volume(
    volume: &PlannedVolume,
    payload: Option<&Payload>,
    mounts: &[mountinfo::MountEntry],
    ownership: Option<VolumeOwnership>,
) -> Result<(), VolumeFileError> {
    let payload = payload.ok_or(VolumeFileError::NoContent)?;
    make_empty_dir(volume, None, mounts)?;
    let group_readable: Payload;
    let payload = if ownership.is_some() {
        group_readable = payload
            .iter()
            .map(|(path, file)| {
                let mode = file.mode | ownership::GROUP_READ;
                (
                    path.clone(),
                    FileContent {
                        mode,
                        ..file.clone()
                    },
                )
            })
            .collect();
        &group_readable
    } else {
        payload
    };
    write_payload(&volume.host_path, payload)?;
    hand_to_group(volume, ownership, true)
}

/// Gives the volume to the pod's `fsGroup`, if it has one: an emptyDir's root (what the pod
/// writes later inherits the group through the setgid bit), or an API-backed volume's whole
/// content, read-only for the group as upstream.
fn hand_to_group(
    volume: &PlannedVolume,
    ownership: Option<VolumeOwnership>,
    api_backed: bool,
) -> Result<(), VolumeFileError> {
    match ownership {
        Some(ownership) => ownership::apply(&volume.host_path, ownership, api_backed, api_backed),
        None => Ok(()),
    }
}

fn make_empty_dir(
    volume: &PlannedVolume,
    size_limit_bytes: Option<i64>,
    mounts: &[mountinfo::MountEntry],
) -> Result<(), VolumeFileError> {
    let path = &volume.host_path;
    let io = VolumeFileError::volume(path);
    std::fs::create_dir_all(path).map_err(io)?;
    if is_mounted(mounts, path, "tmpfs") {
        return Ok(());
    }
    set_mode(path, EMPTY_DIR_MODE).map_err(io)?;
    if volume.is_memory {
        // No mode: the tmpfs root keeps the kernel's 1777 (world-writable, sticky), as upstream
        // mounts it; fsGroup then adds setgid (conformance expects `dgtrwxrwxrwx`).
        let options = size_limit_bytes.map_or_else(String::new, |bytes| format!("size={bytes}"));
        mount_tmpfs(path, &options)?;
    }
    Ok(())
}

/// Unmounts everything mounted under `<root_dir>/pods/<uid>` (subPath bind mounts first,
/// then memory emptyDirs) and removes that directory. A missing directory is fine, so it can
/// be repeated after a crash.
///
/// # Errors
///
/// [`SpecError::Host`] (naming the UID as the pod) when the UID is not a plain name, a mount
/// cannot be removed, or the directory cannot be deleted. Nothing is deleted while a mount is
/// left under it.
pub fn teardown_pod_dir(uid: &str, node: &NodeContext) -> Result<(), SpecError> {
    let pod_dir = node.pod_dir(uid);
    release(uid, &pod_dir, &pod_dir)
}

/// Unmounts and removes the volumes of pod `uid` — its subPath mount points, then everything
/// under `<root_dir>/pods/<uid>/volumes`, memory emptyDirs unmounted first — and keeps the
/// rest of its directory (the files its stopped containers are reported from). This is what
/// upstream does once a pod that is still known has terminated (evicted, past its active
/// deadline): its volumes are torn down and their space given back then, not when the pod
/// object is deleted. A pod without volumes is fine, so it can be repeated.
///
/// # Errors
///
/// As [`teardown_pod_dir`], for the volumes directory.
pub fn teardown_pod_volumes(uid: &str, node: &NodeContext) -> Result<(), SpecError> {
    let pod_dir = node.pod_dir(uid);
    release(uid, &pod_dir, &pod_dir.join(VOLUMES_DIR))
}

/// Whether pod `uid` still has its volumes directory on the node (its volumes are not yet
/// torn down). A directory that cannot be examined counts as still there.
#[must_use]
pub fn pod_volumes_exist(uid: &str, node: &NodeContext) -> bool {
    let volumes = node.pod_dir(uid).join(VOLUMES_DIR);
    !matches!(std::fs::symlink_metadata(volumes), Err(e) if e.kind() == ErrorKind::NotFound)
}

/// Removes `target`, at or below `pod_dir` of pod `uid`, after the pod's subPath mount points
/// and every mount under `target`. Nothing is deleted while a mount is left under it.
fn release(uid: &str, pod_dir: &Path, target: &Path) -> Result<(), SpecError> {
    if !is_safe_path_component(uid) {
        return Err(SpecError::host_reason(
            uid,
            pod_dir,
            "the pod UID is not a plain name",
        ));
    }
    let fail = |path: &Path, error: &dyn std::error::Error| {
        SpecError::host_reason(uid, path, error.to_string())
    };
    clear_pod_mount_points(pod_dir).map_err(|e| fail(pod_dir, &e))?;
    for mount_point in mounts_under(target).map_err(|e| fail(target, &e))? {
        unmount(&mount_point).map_err(|e| fail(&mount_point, &e))?;
    }
    if let Some(left) = mounts_under(target).map_err(|e| fail(target, &e))?.first() {
        let reason = format!("is still mounted; {} is kept", target.display());
        return Err(SpecError::host_reason(uid, left, reason));
    }
    match std::fs::remove_dir_all(target) {
        Err(e) if e.kind() != ErrorKind::NotFound => Err(SpecError::host(uid, target, &e)),
        _ => Ok(()),
    }
}

/// Mount points at or below `dir`, deepest first.
fn mounts_under(dir: &Path) -> Result<Vec<PathBuf>, MountTableError> {
    let mut found: Vec<PathBuf> = node_mounts()?
        .into_iter()
        .map(|m| m.mount_point)
        .filter(|p| p.starts_with(dir))
        .collect();
    found.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    found.dedup();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::super::prepare_sub_paths;
    use super::*;
    use k8s_openapi::api::core::v1::Volume;
    use sergeant_core::testing::{empty_dir, host_path};
    use sergeant_core::testing::{node, pod_with};
    use sergeant_core::volumes::SubPathMount;
    use std::os::unix::fs::PermissionsExt;

    fn planned(root: &Path, volumes: Vec<Volume>) -> (VolumePlan, NodeContext) {
        let node = node(root.to_path_buf());
        let mut pod = pod_with(vec![], vec![]);
        pod.spec.as_mut().unwrap().volumes = Some(volumes);
        (VolumePlan::for_pod(&pod, &node).unwrap(), node)
    }

    /// Real tmpfs mounts (the tests run as root): set up twice, used, torn down twice.
    #[test]
    fn volumes_are_set_up_and_torn_down_idempotently() {
        let root = tempfile::tempdir().unwrap();
        let shared = root.path().join("shared");
        let (plan, node) = planned(
            root.path(),
            vec![
                empty_dir("disk", None, None),
                empty_dir("mem", Some("Memory"), Some("1Mi")),
                host_path(
                    "shared",
                    shared.to_str().unwrap(),
                    Some("DirectoryOrCreate"),
                ),
            ],
        );
        setup_volumes(&plan, &BTreeMap::new()).unwrap();
        setup_volumes(&plan, &BTreeMap::new()).unwrap();
        let mem = &plan.get("mem").unwrap().host_path;
        let mounts = mountinfo::mounts().unwrap();
        assert_eq!(
            mounts.iter().filter(|m| &m.mount_point == mem).count(),
            1,
            "one tmpfs, mounted once"
        );
        assert!(is_mounted(&mounts, mem, "tmpfs"));
        assert_eq!(
            std::fs::metadata(mem).unwrap().permissions().mode() & 0o7777,
            0o1777,
            "a tmpfs root is world-writable and sticky, as upstream mounts it"
        );
        let disk = &plan.get("disk").unwrap().host_path;
        assert_eq!(
            std::fs::metadata(disk).unwrap().permissions().mode() & 0o777,
            0o777
        );
        assert!(shared.is_dir());
        std::fs::write(mem.join("f"), b"x").unwrap();
        // The size limit holds.
        assert!(std::fs::write(mem.join("big"), vec![0u8; 2 << 20]).is_err());

        teardown_pod_dir("uid-1", &node).unwrap();
        teardown_pod_dir("uid-1", &node).unwrap();
        assert!(!node.pod_dir("uid-1").exists());
        assert!(!is_mounted(&mountinfo::mounts().unwrap(), mem, "tmpfs"));
        assert!(
            shared.is_dir(),
            "hostPath volumes are the node's, never removed"
        );
    }

    /// A terminated pod's volumes go (memory emptyDirs unmounted), its directory stays.
    #[test]
    fn a_terminated_pods_volumes_are_torn_down_and_its_directory_kept() {
        let root = tempfile::tempdir().unwrap();
        let (plan, node) = planned(
            root.path(),
            vec![
                empty_dir("disk", None, None),
                empty_dir("mem", Some("Memory"), Some("1Mi")),
            ],
        );
        setup_volumes(&plan, &BTreeMap::new()).unwrap();
        let disk = &plan.get("disk").unwrap().host_path;
        let mem = &plan.get("mem").unwrap().host_path;
        std::fs::write(disk.join("fill"), vec![b'x'; 256 * 1024]).unwrap();
        let kept = node.pod_dir("uid-1").join("containers");
        std::fs::create_dir_all(&kept).unwrap();
        assert!(pod_volumes_exist("uid-1", &node));

        teardown_pod_volumes("uid-1", &node).unwrap();
        teardown_pod_volumes("uid-1", &node).unwrap();
        assert!(!pod_volumes_exist("uid-1", &node));
        assert!(!disk.exists());
        assert!(!is_mounted(&mountinfo::mounts().unwrap(), mem, "tmpfs"));
        assert!(kept.is_dir(), "the rest of the pod's directory stays");
        assert!(teardown_pod_volumes("../escape", &node).is_err());
        teardown_pod_dir("uid-1", &node).unwrap();
        assert!(!node.pod_dir("uid-1").exists());
    }

    /// API-backed volumes: written at setup (secrets on a tmpfs), updated by a refresh,
    /// unmounted by the teardown.
    #[test]
    fn api_volumes_are_written_refreshed_and_torn_down() {
        let root = tempfile::tempdir().unwrap();
        let volumes: Vec<Volume> = serde_json::from_value(serde_json::json!([
            {"name": "cfg", "configMap": {"name": "cm"}},
            {"name": "sec", "secret": {"secretName": "s"}}
        ]))
        .unwrap();
        let (plan, node) = planned(root.path(), volumes);
        let payload = |text: &str| -> Payload {
            let file = sergeant_core::volumes::FileContent {
                data: text.as_bytes().to_vec(),
                mode: 0o644,
            };
            [("k".to_owned(), file)].into()
        };
        let missing = setup_volumes(&plan, &BTreeMap::new()).unwrap_err();
        assert_eq!(missing.kind, "configMap");
        assert!(
            missing.reason.ends_with("its content is not known"),
            "{missing}"
        );
        let first = BTreeMap::from([
            ("cfg".to_owned(), payload("a")),
            ("sec".to_owned(), payload("b")),
        ]);
        setup_volumes(&plan, &first).unwrap();
        let cfg = plan.get("cfg").unwrap().host_path.clone();
        let sec = plan.get("sec").unwrap().host_path.clone();
        assert_eq!(std::fs::read_to_string(cfg.join("k")).unwrap(), "a");
        assert_eq!(std::fs::read_to_string(sec.join("k")).unwrap(), "b");
        let mounts = mountinfo::mounts().unwrap();
        assert!(is_mounted(&mounts, &sec, "tmpfs"));
        assert!(!is_mounted(&mounts, &cfg, "tmpfs"));

        // Only the volumes with a payload are refreshed.
        let update = BTreeMap::from([("cfg".to_owned(), payload("changed"))]);
        assert!(refresh_api_volumes(&plan, &update).is_empty());
        assert_eq!(std::fs::read_to_string(cfg.join("k")).unwrap(), "changed");
        assert_eq!(std::fs::read_to_string(sec.join("k")).unwrap(), "b");

        teardown_pod_dir("uid-1", &node).unwrap();
        assert!(!is_mounted(&mountinfo::mounts().unwrap(), &sec, "tmpfs"));
        assert!(!node.pod_dir("uid-1").exists());
    }

    /// subPath bind mounts, one of a host directory, are unmounted by the teardown, which
    /// never deletes through them: the host directory keeps its files, even when the root
    /// directory is reached through a link (so `/proc/self/mountinfo` spells it otherwise).
    #[test]
    fn teardown_unmounts_sub_paths_and_keeps_what_they_showed() {
        let dir = tempfile::tempdir().unwrap();
        let host = dir.path().join("host");
        std::fs::create_dir_all(host.join("etc")).unwrap();
        std::fs::write(host.join("etc/keep"), "host file").unwrap();
        std::fs::create_dir(dir.path().join("real-root")).unwrap();
        let root = dir.path().join("root");
        std::os::unix::fs::symlink("real-root", &root).unwrap();
        let (plan, node) = planned(
            &root,
            vec![
                empty_dir("data", None, None),
                host_path("h", host.to_str().unwrap(), Some("Directory")),
            ],
        );
        setup_volumes(&plan, &BTreeMap::new()).unwrap();
        let sub_path = |volume: &str, index: usize, given: &str| {
            SubPathMount::plan(
                "ns/web",
                format!("spec.containers[0].volumeMounts[{index}].subPath"),
                &plan.pod_dir,
                volume,
                plan.get(volume).unwrap(),
                "app",
                index,
                given,
                index == 1,
            )
            .unwrap()
            .unwrap()
        };
        let mounts = [sub_path("data", 0, "made"), sub_path("h", 1, "etc")];
        /// Unmounts what a failed assertion would leave behind.
        struct Guard(PathBuf);
        impl Drop for Guard {
            fn drop(&mut self) {
                let _ = super::clear_pod_mount_points(&self.0);
            }
        }
        let _guard = Guard(plan.pod_dir.clone());
        prepare_sub_paths(&mounts).unwrap();
        // As `/proc/self/mountinfo` spells them.
        let points: Vec<PathBuf> = mounts
            .iter()
            .map(|m| {
                let inside = m.mount_point.strip_prefix(&root).unwrap();
                dir.path().join("real-root").join(inside)
            })
            .collect();
        let is_bound = |path: &Path| {
            mountinfo::mounts()
                .unwrap()
                .iter()
                .any(|m| m.mount_point == path)
        };
        assert!(points.iter().all(|p| is_bound(p)));
        assert!(points[1].join("keep").is_file());

        teardown_pod_dir("uid-1", &node).unwrap();
        assert!(points.iter().all(|p| !is_bound(p)));
        assert!(!node.pod_dir("uid-1").exists());
        assert_eq!(
            std::fs::read_to_string(host.join("etc/keep")).unwrap(),
            "host file"
        );
    }

    #[test]
    fn a_wrong_host_path_names_pod_and_path() {
        let root = tempfile::tempdir().unwrap();
        let (plan, node) = planned(
            root.path(),
            vec![host_path("h", "/dev/null", Some("Directory"))],
        );
        assert_eq!(
            setup_volumes(&plan, &BTreeMap::new())
                .unwrap_err()
                .to_string(),
            "pod ns/web: volume \"h\" (hostPath): /dev/null: is not a directory"
        );
        assert!(teardown_pod_dir("../x", &node)
            .unwrap_err()
            .to_string()
            .contains("not a plain name"));
    }
}
