//! A container's mounts: its `volumeMounts` resolved through the [`VolumePlan`] (a subPath
//! becomes a [`SubPathMount`], bound by the node before the container is created), the file it
//! writes its termination message to, and the pod's managed `/etc/hosts`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use k8s_cri::v1::{Mount, MountPropagation};
use k8s_openapi::api::core::v1::{Container, Pod};

use super::expand::expand;
use super::hosts::ETC_HOSTS;
use crate::context::{is_safe_path_component, NodeContext, PodIdentity, SpecError};
use crate::volumes::{SubPathMount, VolumePlan};

/// Where a container writes its termination message when the spec does not say.
pub const DEFAULT_TERMINATION_MESSAGE_PATH: &str = "/dev/termination-log";

/// The runtime mounts of `container` (at `field`): each `volumeMount` on its volume's host
/// path, or — with a `subPath`, or a `subPathExpr` expanded with `env` — on the node's mount
/// point for it, then the termination log, then the pod's managed hosts file `etc_hosts` at
/// `/etc/hosts` unless a volume is mounted there. Also returns the subPath mounts to make
/// ([`crate::volumes::prepare_sub_paths`]) before the runtime sees these mounts.
pub fn container_mounts(
    id: &PodIdentity,
    container: &Container,
    field: &str,
    plan: &VolumePlan,
    env: &HashMap<String, String>,
    termination_log: Option<(PathBuf, &str)>,
    etc_hosts: Option<PathBuf>,
) -> Result<(Vec<Mount>, Vec<SubPathMount>), SpecError> {
    let privileged = container
        .security_context
        .as_ref()
        .and_then(|sc| sc.privileged)
        .unwrap_or(false);
    let mut mounts = Vec::new();
    let mut sub_paths = Vec::new();
    for (index, volume_mount) in container.volume_mounts.iter().flatten().enumerate() {
        let at = |name: &str| format!("{field}.volumeMounts[{index}].{name}");
        let fail = |name: &str, reason: String| SpecError::field(&id.display, at(name), reason);
        let volume = plan.get(&volume_mount.name).ok_or_else(|| {
            fail(
                "name",
                format!("the pod has no volume named {:?}", volume_mount.name),
            )
        })?;
        let (sub_path, sub_field) = match (&volume_mount.sub_path_expr, &volume_mount.sub_path) {
            (Some(expr), _) if !expr.is_empty() => (
                expand(expr, |name| env.get(name).map(String::as_str)),
                "subPathExpr",
            ),
            (_, sub_path) => (sub_path.clone().unwrap_or_default(), "subPath"),
        };
        let read_only = volume_mount.read_only.unwrap_or(false) || volume.read_only;
        if !sub_path.is_empty() && !is_safe_path_component(&container.name) {
            return Err(SpecError::field(
                &id.display,
                format!("{field}.name"),
                format!("{:?} is not usable as a directory name", container.name),
            ));
        }
        let sub_path_mount = SubPathMount::plan(
            &id.display,
            at(sub_field),
            &plan.pod_dir,
            &volume_mount.name,
            volume,
            &container.name,
            index,
            &sub_path,
            read_only,
        )
        .map_err(|reason| fail(sub_field, format!("{sub_path:?} {reason}")))?;
        let propagation = match volume_mount.mount_propagation.as_deref().unwrap_or("None") {
            "None" => MountPropagation::PropagationPrivate,
            "HostToContainer" => MountPropagation::PropagationHostToContainer,
            "Bidirectional" if privileged => MountPropagation::PropagationBidirectional,
            "Bidirectional" => {
                return Err(fail(
                    "mountPropagation",
                    "Bidirectional needs a privileged container".to_string(),
                ))
            }
            other => {
                return Err(fail(
                    "mountPropagation",
                    format!("unknown mode {other:?} (use None, HostToContainer or Bidirectional)"),
                ))
            }
        };
        let host_path = match &sub_path_mount {
            Some(bound) => &bound.mount_point,
            None => &volume.host_path,
        };
        mounts.push(Mount {
            container_path: volume_mount.mount_path.clone(),
            host_path: host_path.display().to_string(),
            readonly: read_only,
            propagation: propagation as i32,
            ..Default::default()
        });
        sub_paths.extend(sub_path_mount);
    }
    if let Some((host_path, container_path)) = termination_log {
        mounts.push(Mount {
            container_path: container_path.to_string(),
            host_path: host_path.display().to_string(),
            ..Default::default()
        });
    }
    let own_hosts = mounts
        .iter()
        .any(|m| Path::new(&m.container_path) == Path::new(ETC_HOSTS));
    if let Some(host_path) = etc_hosts.filter(|_| !own_hosts) {
        mounts.push(Mount {
            container_path: ETC_HOSTS.to_string(),
            host_path: host_path.display().to_string(),
            ..Default::default()
        });
    }
    Ok((mounts, sub_paths))
}

/// The container's termination message path inside the container; `None` when it has none.
pub fn termination_message_path(container: &Container) -> Option<&str> {
    match container.termination_message_path.as_deref() {
        None => Some(DEFAULT_TERMINATION_MESSAGE_PATH),
        Some("") => None,
        Some(path) => Some(path),
    }
}

/// `<root_dir>/pods/<uid>/containers/<name>/<restart_count>`: the host file behind the
/// termination message of one instance of a container.
pub fn termination_log_path(
    node: &NodeContext,
    id: &PodIdentity,
    container: &Container,
    field: &str,
    restart_count: u32,
) -> Result<PathBuf, SpecError> {
    if !is_safe_path_component(&container.name) {
        return Err(SpecError::field(
            &id.display,
            format!("{field}.name"),
            format!("{:?} is not usable as a directory name", container.name),
        ));
    }
    Ok(node
        .pod_dir(&id.uid)
        .join("containers")
        .join(&container.name)
        .join(restart_count.to_string()))
}

/// The host file the container's termination message goes to; `None` when the container has
/// no termination message path. `sergeant_host::pod_files::prepare_termination_log` creates it
/// empty before [`super::container_config`] mounts it.
///
/// # Errors
///
/// [`SpecError::Field`] for a pod without name or usable UID or a container name unusable as a
/// directory.
pub fn termination_log_file(
    pod: &Pod,
    container: &Container,
    restart_count: u32,
    node: &NodeContext,
) -> Result<Option<PathBuf>, SpecError> {
    let id = PodIdentity::of(pod)?;
    if termination_message_path(container).is_none() {
        return Ok(None);
    }
    let path = termination_log_path(
        node,
        &id,
        container,
        &format!("container {:?}", container.name),
        restart_count,
    )?;
    Ok(Some(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{node, pod_with};
    use k8s_openapi::api::core::v1::{SecurityContext, Volume, VolumeMount};

    fn setup(mounts: Vec<VolumeMount>) -> (Pod, VolumePlan, Container) {
        let mut pod = pod_with(vec![], vec![]);
        pod.spec.as_mut().unwrap().volumes = Some(vec![Volume {
            name: "data".into(),
            empty_dir: Some(Default::default()),
            ..Default::default()
        }]);
        let plan = VolumePlan::for_pod(&pod, &node(PathBuf::from("/r"))).unwrap();
        let container = Container {
            name: "c".into(),
            volume_mounts: Some(mounts),
            ..Default::default()
        };
        (pod, plan, container)
    }

    fn vm(name: &str, path: &str) -> VolumeMount {
        VolumeMount {
            name: name.into(),
            mount_path: path.into(),
            ..Default::default()
        }
    }

    fn run(mounts: Vec<VolumeMount>, privileged: bool) -> Result<Vec<Mount>, SpecError> {
        run_with_sub_paths(mounts, privileged).map(|(mounts, _)| mounts)
    }

    fn run_with_sub_paths(
        mounts: Vec<VolumeMount>,
        privileged: bool,
    ) -> Result<(Vec<Mount>, Vec<SubPathMount>), SpecError> {
        let (pod, plan, mut container) = setup(mounts);
        if privileged {
            container.security_context = Some(SecurityContext {
                privileged: Some(true),
                ..Default::default()
            });
        }
        let env = HashMap::from([
            ("POD".to_string(), "web".to_string()),
            ("UP".to_string(), "..".to_string()),
        ]);
        let id = PodIdentity::of(&pod).unwrap();
        container_mounts(
            &id,
            &container,
            "spec.containers[0]",
            &plan,
            &env,
            Some((PathBuf::from("/r/t"), "/dev/termination-log")),
            Some(PathBuf::from("/r/h")),
        )
    }

    #[test]
    fn mounts_resolve_volumes_sub_paths_and_the_termination_log() {
        let base = "/r/pods/uid-1/volumes/kubernetes.io~empty-dir/data";
        let bound = "/r/pods/uid-1/volume-subpaths/data/c";
        let (mounts, sub_paths) = run_with_sub_paths(
            vec![
                VolumeMount {
                    read_only: Some(true),
                    ..vm("data", "/data")
                },
                VolumeMount {
                    sub_path: Some("a/b".into()),
                    ..vm("data", "/sub")
                },
                VolumeMount {
                    sub_path_expr: Some("logs/$(POD)".into()),
                    mount_propagation: Some("HostToContainer".into()),
                    ..vm("data", "/expr")
                },
            ],
            false,
        )
        .unwrap();
        assert_eq!(mounts.len(), 5);
        assert_eq!(
            (
                mounts[0].host_path.as_str(),
                mounts[0].container_path.as_str(),
                mounts[0].readonly
            ),
            (base, "/data", true)
        );
        assert_eq!(
            mounts[0].propagation,
            MountPropagation::PropagationPrivate as i32
        );
        // A subPath is never joined to the volume for the runtime: it gets the node's mount
        // point, which `prepare_sub_paths` binds to the subPath resolved inside the volume.
        assert_eq!(mounts[1].host_path, format!("{bound}/1"));
        assert_eq!(mounts[2].host_path, format!("{bound}/2"));
        let planned: Vec<(&str, &str, &Path, &Path, bool)> = sub_paths
            .iter()
            .map(|m| {
                (
                    m.field.as_str(),
                    m.given.as_str(),
                    m.sub_path.as_path(),
                    m.mount_point.as_path(),
                    m.read_only,
                )
            })
            .collect();
        assert_eq!(
            planned,
            [
                (
                    "spec.containers[0].volumeMounts[1].subPath",
                    "a/b",
                    Path::new("a/b"),
                    Path::new(&format!("{bound}/1")),
                    false
                ),
                (
                    "spec.containers[0].volumeMounts[2].subPathExpr",
                    "logs/web",
                    Path::new("logs/web"),
                    Path::new(&format!("{bound}/2")),
                    false
                ),
            ]
        );
        assert!(sub_paths
            .iter()
            .all(|m| m.volume_root == Path::new(base) && m.pod == "ns/web"));
        assert_eq!(
            mounts[2].propagation,
            MountPropagation::PropagationHostToContainer as i32
        );
        assert_eq!(
            (
                mounts[3].host_path.as_str(),
                mounts[3].container_path.as_str(),
                mounts[3].readonly
            ),
            ("/r/t", "/dev/termination-log", false)
        );
        assert_eq!(
            (
                mounts[4].host_path.as_str(),
                mounts[4].container_path.as_str(),
                mounts[4].readonly
            ),
            ("/r/h", "/etc/hosts", false)
        );
    }

    #[test]
    fn a_container_mounting_its_own_etc_hosts_keeps_it() {
        let mounts = run(vec![vm("data", "/etc//hosts/")], false).unwrap();
        let at_hosts: Vec<_> = mounts
            .iter()
            .filter(|m| Path::new(&m.container_path) == Path::new("/etc/hosts"))
            .collect();
        assert_eq!(at_hosts.len(), 1, "{mounts:?}");
        assert!(at_hosts[0].host_path.ends_with("/data"), "{mounts:?}");
    }

    #[test]
    fn bad_mounts_name_their_field() {
        let error = run(vec![vm("data", "/a"), vm("nope", "/b")], false)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains(
                "spec.containers[0].volumeMounts[1].name: the pod has no volume named \"nope\""
            ),
            "{error}"
        );
        let error = run(
            vec![VolumeMount {
                sub_path: Some("../etc".into()),
                ..vm("data", "/a")
            }],
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("volumeMounts[0].subPath"), "{error}");
        let error = run(
            vec![VolumeMount {
                sub_path: Some("/etc".into()),
                ..vm("data", "/a")
            }],
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("volumeMounts[0].subPath"), "{error}");
        let error = run(
            vec![VolumeMount {
                sub_path_expr: Some("$(UP)/x".into()),
                ..vm("data", "/a")
            }],
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.ends_with(
                "spec.containers[0].volumeMounts[0].subPathExpr: \"../x\" has a '..' component; \
                 a subPath must stay inside its volume"
            ),
            "{error}"
        );
        let bidirectional = VolumeMount {
            mount_propagation: Some("Bidirectional".into()),
            ..vm("data", "/a")
        };
        assert!(run(vec![bidirectional.clone()], false)
            .unwrap_err()
            .to_string()
            .contains("privileged"));
        assert_eq!(
            run(vec![bidirectional], true).unwrap()[0].propagation,
            MountPropagation::PropagationBidirectional as i32
        );
    }

    #[test]
    fn a_sub_path_needs_a_container_name_usable_as_a_directory() {
        let (pod, plan, mut container) = setup(vec![VolumeMount {
            sub_path: Some("a".into()),
            ..vm("data", "/a")
        }]);
        container.name = "..".into();
        let id = PodIdentity::of(&pod).unwrap();
        let error = container_mounts(
            &id,
            &container,
            "spec.containers[0]",
            &plan,
            &HashMap::new(),
            None,
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("spec.containers[0].name: \"..\" is not usable"),
            "{error}"
        );
    }

    #[test]
    fn the_termination_log_file_is_per_container_and_restart() {
        let node = node(PathBuf::from("/r"));
        let pod = pod_with(vec![], vec![]);
        let container = Container {
            name: "c".into(),
            ..Default::default()
        };
        let path = termination_log_file(&pod, &container, 3, &node).unwrap();
        assert_eq!(path, Some(PathBuf::from("/r/pods/uid-1/containers/c/3")));
        let none = Container {
            termination_message_path: Some(String::new()),
            ..container.clone()
        };
        assert_eq!(termination_log_file(&pod, &none, 0, &node).unwrap(), None);
        let bad = Container {
            name: "..".into(),
            ..container
        };
        assert!(termination_log_file(&pod, &bad, 0, &node).is_err());
    }
}
