//! The CRI configuration of one container: image, command, environment, mounts, logs, labels
//! and annotations, cgroup resources and security settings.

use std::collections::HashMap;

use k8s_cri::v1::{ContainerConfig, ContainerMetadata, ImageSpec, LinuxContainerConfig};
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};

use super::env::container_env;
use super::expand::expand;
use super::hosts::managed_hosts_path;
use super::hosts::ETC_HOSTS;
use super::image::NodeImage;
use super::mount_path::container_mount_path;
use super::mounts::{container_mounts, termination_log_path, termination_message_path};
use super::pod_resources::memory_request_bytes;
use super::quantity::container_amounts;
use super::resources::container_resources;
use super::sandbox::identity_labels;
use super::security::{check_non_root_image, container_security, ImageUser};
use super::windows::{container_windows, drive_rooted, host_process_pod, WINDOWS_ETC_HOSTS};
use crate::context::{EnvSources, NodeContext, NodeOs, PodIdentity, PodObjects, SpecError};
use crate::hash::container_hash;
use crate::kind::ContainerKind;
use crate::labels;
use crate::volumes::{SubPathMount, VolumePlan};

/// The grace period of a pod that names none, in seconds.
const DEFAULT_GRACE_PERIOD_SECONDS: i64 = 30;

/// What creating one container needs: its runtime configuration, and the subPath mounts the
/// node must bind before the runtime sees it (the configuration mounts their mount points).
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerSetup {
    /// The CRI configuration.
    pub config: ContainerConfig,
    /// Its subPath mounts, for [`crate::volumes::prepare_sub_paths`].
    pub sub_paths: Vec<SubPathMount>,
}

/// The runtime configuration of the `restart_count`-th instance of `container`, with the
/// subPath mounts to prepare before it is created. `pod_ip` is
/// the sandbox's address, which env `fieldRef: status.podIP` needs; pass `None` when it is not
/// known (such a reference then fails with a precise error). `objects` holds the config maps
/// and secrets the environment reads, fetched beforehand; `image` is the container's image on
/// the node: the container is created from its ID, and a Windows container runs as its user
/// unless it names another. Mounts the termination-log file
/// that [`super::prepare_termination_log`] creates and the hosts file of
/// [`super::prepare_hosts_file`]. Pure: no I/O.
///
/// # Errors
///
/// [`SpecError::Field`] naming the field at fault: missing image, unusable name, quantities
/// that do not parse, env references the node cannot answer (a missing config map, secret or
/// key that is not optional; any of them on a standalone node), mounts of unknown volumes or
/// escaping sub paths, contradictory security settings.
#[allow(clippy::too_many_arguments)]
pub fn container_config(
    pod: &Pod,
    container: &Container,
    kind: ContainerKind,
    restart_count: u32,
    node: &NodeContext,
    volumes: &VolumePlan,
    pod_ip: Option<&str>,
    objects: &PodObjects,
    image: &NodeImage,
) -> Result<ContainerSetup, SpecError> {
    let id = PodIdentity::of(pod)?;
    let empty = PodSpec::default();
    let spec = pod.spec.as_ref().unwrap_or(&empty);
    let field = container_field(spec, container, kind);
    let named = container
        .image
        .clone()
        .filter(|i| !i.is_empty())
        .ok_or_else(|| SpecError::field(&id.display, format!("{field}.image"), "is missing"))?;
    let sources = EnvSources {
        pod,
        id: &id,
        node,
        pod_ip,
        objects,
    };
    let envs = container_env(&sources, container, &field)?;
    let values: HashMap<String, String> = envs
        .iter()
        .map(|kv| (kv.key.clone(), kv.value.clone()))
        .collect();
    let expand_all = |list: &Option<Vec<String>>| -> Vec<String> {
        list.iter()
            .flatten()
            .map(|item| expand(item, |name| values.get(name).map(String::as_str)))
            .collect()
    };
    let message_path = termination_message_path(container);
    let termination_log = match message_path {
        Some(path) => Some((
            termination_log_path(node, &id, container, &field, restart_count)?,
            path,
        )),
        None => None,
    };
    let mut etc_hosts = managed_hosts_path(pod, &id, node, pod_ip.is_some());
    // A Windows node mounts no hosts file into a HostProcess pod: it uses the host's.
    if node.os == NodeOs::Windows && host_process_pod(&id.display, spec)? {
        etc_hosts = None;
    }
    let managed_hosts = etc_hosts.as_ref().map(|path| path.display().to_string());
    let log_file = termination_log
        .as_ref()
        .map(|(path, _)| path.display().to_string());
    let (mut mounts, sub_paths) = container_mounts(
        &id,
        container,
        &field,
        volumes,
        &values,
        termination_log,
        etc_hosts,
    )?;
    // Volume mount paths made absolute on the node's OS; inside a Windows container, the hosts
    // file where Windows keeps it and the termination log on drive c:.
    for mount in &mut mounts {
        let of = |file: &Option<String>| file.as_deref() == Some(mount.host_path.as_str());
        let hosts = mount.container_path == ETC_HOSTS && of(&managed_hosts);
        mount.container_path = match node.os {
            NodeOs::Windows if hosts => WINDOWS_ETC_HOSTS.to_owned(),
            NodeOs::Windows if of(&log_file) => drive_rooted(&mount.container_path),
            NodeOs::Linux if hosts || of(&log_file) => continue,
            os => container_mount_path(os, &mount.container_path),
        };
    }
    // The log file's path under the pod's log directory, in the node's own separators.
    let separator = if node.os == NodeOs::Windows {
        '\\'
    } else {
        '/'
    };
    let (linux, windows) = match node.os {
        NodeOs::Linux => (
            Some(LinuxContainerConfig {
                resources: Some(container_resources(
                    pod,
                    &id.display,
                    &field,
                    container,
                    node.memory_capacity_bytes,
                )?),
                security_context: Some(container_security(
                    &id.display,
                    pod,
                    container,
                    &field,
                    node,
                )?),
            }),
            None,
        ),
        NodeOs::Windows => {
            let amounts = container_amounts(&id.display, &field, container)?;
            (
                None,
                Some(container_windows(
                    &id.display,
                    spec,
                    container,
                    &amounts.limits,
                    &image.user,
                    node.processors(),
                )?),
            )
        }
    };
    let mut container_labels = identity_labels(&id, node);
    container_labels.insert(labels::CONTAINER_NAME.to_string(), container.name.clone());
    let config = ContainerConfig {
        metadata: Some(ContainerMetadata {
            name: container.name.clone(),
            attempt: restart_count,
        }),
        image: Some(ImageSpec {
            image: image.id.clone(),
            user_specified_image: named,
            ..Default::default()
        }),
        command: expand_all(&container.command),
        args: expand_all(&container.args),
        working_dir: container.working_dir.clone().unwrap_or_default(),
        envs,
        mounts,
        labels: container_labels,
        annotations: annotations(spec, container, kind, restart_count, message_path),
        log_path: format!("{}{separator}{restart_count}.log", container.name),
        stdin: container.stdin.unwrap_or(false),
        stdin_once: container.stdin_once.unwrap_or(false),
        tty: container.tty.unwrap_or(false),
        linux,
        windows,
        ..Default::default()
    };
    Ok(ContainerSetup { config, sub_paths })
}

/// Refuses `container` of `pod` when its `runAsNonRoot` cannot hold with the user its image
/// runs as (see [`check_non_root_image`]); called once the image is on the node, before the
/// container is created.
///
/// # Errors
///
/// [`SpecError::Field`] naming the container's `securityContext.runAsNonRoot`, or the pod's
/// identity error.
pub fn check_image_user(
    pod: &Pod,
    container: &Container,
    kind: ContainerKind,
    user: &ImageUser,
) -> Result<(), SpecError> {
    let id = PodIdentity::of(pod)?;
    let empty = PodSpec::default();
    let spec = pod.spec.as_ref().unwrap_or(&empty);
    let field = container_field(spec, container, kind);
    check_non_root_image(&id.display, spec, container, &field, user)
}

/// What a restarted agent needs to know about the container without its pod spec.
fn annotations(
    spec: &PodSpec,
    container: &Container,
    kind: ContainerKind,
    restart_count: u32,
    message_path: Option<&str>,
) -> HashMap<String, String> {
    let grace = spec
        .termination_grace_period_seconds
        .unwrap_or(DEFAULT_GRACE_PERIOD_SECONDS);
    let policy = container
        .termination_message_policy
        .clone()
        .unwrap_or_else(|| "File".to_string());
    HashMap::from([
        (
            labels::CONTAINER_HASH.to_string(),
            container_hash(container),
        ),
        (
            labels::CONTAINER_RESTART_COUNT.to_string(),
            restart_count.to_string(),
        ),
        (
            labels::TERMINATION_MESSAGE_PATH.to_string(),
            message_path.unwrap_or_default().to_string(),
        ),
        (labels::TERMINATION_MESSAGE_POLICY.to_string(), policy),
        (
            labels::POD_TERMINATION_GRACE_PERIOD.to_string(),
            grace.to_string(),
        ),
        (
            labels::CONTAINER_KIND.to_string(),
            kind.as_str().to_string(),
        ),
        (
            labels::CONTAINER_MEMORY_REQUEST.to_string(),
            memory_request_bytes(container).to_string(),
        ),
    ])
}

/// `spec.containers[i]`, `spec.initContainers[i]` or `spec.ephemeralContainers[i]` for the
/// container, found by name in the list its kind belongs to.
fn container_field(spec: &PodSpec, container: &Container, kind: ContainerKind) -> String {
    let names: Vec<&str> = match kind {
        ContainerKind::Regular => spec.containers.iter().map(|c| c.name.as_str()).collect(),
        ContainerKind::Init | ContainerKind::Sidecar => {
            let list = spec.init_containers.iter().flatten();
            list.map(|c| c.name.as_str()).collect()
        }
        ContainerKind::Ephemeral => {
            let list = spec.ephemeral_containers.iter().flatten();
            list.map(|c| c.name.as_str()).collect()
        }
    };
    let list_name = match kind {
        ContainerKind::Regular => "containers",
        ContainerKind::Init | ContainerKind::Sidecar => "initContainers",
        ContainerKind::Ephemeral => "ephemeralContainers",
    };
    match names.iter().position(|name| *name == container.name) {
        Some(index) => format!("spec.{list_name}[{index}]"),
        None => format!("spec.{list_name}[name={}]", container.name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{node, pod_with, resources};
    use k8s_openapi::api::core::v1::{EnvVar, Volume, VolumeMount};
    use std::path::PathBuf;

    fn app() -> Container {
        let mut c = resources(
            "app",
            &[("cpu", "100m")],
            &[("cpu", "200m"), ("memory", "64Mi")],
        );
        c.env = Some(vec![
            EnvVar {
                name: "WHO".into(),
                value: Some("world".into()),
                value_from: None,
            },
            EnvVar {
                name: "GREETING".into(),
                value: Some("hello $(WHO)".into()),
                value_from: None,
            },
        ]);
        c.command = Some(vec![
            "sh".into(),
            "-c".into(),
            "echo $(GREETING) $$(WHO) $(NOPE)".into(),
        ]);
        c.args = Some(vec!["$(WHO)".into()]);
        c.working_dir = Some("/tmp".into());
        c.tty = Some(true);
        c.volume_mounts = Some(vec![VolumeMount {
            name: "data".into(),
            mount_path: "/data".into(),
            ..Default::default()
        }]);
        c
    }

    fn build(
        pod: &Pod,
        container: &Container,
        kind: ContainerKind,
    ) -> Result<ContainerConfig, SpecError> {
        let node = node(PathBuf::from("/r"));
        let plan = VolumePlan::for_pod(pod, &node).unwrap();
        container_config(
            pod,
            container,
            kind,
            4,
            &node,
            &plan,
            None,
            &PodObjects::default(),
            &NodeImage {
                id: "sha256:1d".into(),
                user: ImageUser::Uid(0),
            },
        )
        .map(|setup| setup.config)
    }

    fn app_pod() -> Pod {
        let mut pod = pod_with(vec![app()], vec![resources("setup", &[], &[])]);
        let spec = pod.spec.as_mut().unwrap();
        spec.volumes = Some(vec![Volume {
            name: "data".into(),
            empty_dir: Some(Default::default()),
            ..Default::default()
        }]);
        spec.termination_grace_period_seconds = Some(5);
        pod
    }

    #[test]
    fn a_container_becomes_a_full_cri_config() {
        let pod = app_pod();
        let container = &pod.spec.as_ref().unwrap().containers[0];
        let config = build(&pod, container, ContainerKind::Regular).unwrap();
        assert_eq!(
            config.metadata,
            Some(ContainerMetadata {
                name: "app".into(),
                attempt: 4
            })
        );
        // Created from the image's ID, naming it as the container does.
        assert_eq!(
            config.image,
            Some(ImageSpec {
                image: "sha256:1d".into(),
                user_specified_image: "img:1".into(),
                ..Default::default()
            })
        );
        assert_eq!(
            config.command,
            vec!["sh", "-c", "echo hello world $(WHO) $(NOPE)"]
        );
        assert_eq!(config.args, vec!["world"]);
        assert_eq!(
            config
                .envs
                .iter()
                .map(|kv| (kv.key.as_str(), kv.value.as_str()))
                .collect::<Vec<_>>(),
            vec![("WHO", "world"), ("GREETING", "hello world")]
        );
        assert_eq!(config.working_dir, "/tmp");
        assert!(config.tty && !config.stdin);
        assert_eq!(config.log_path, "app/4.log");
        assert_eq!(config.mounts.len(), 2);
        assert_eq!(config.mounts[1].host_path, "/r/pods/uid-1/containers/app/4");
        assert_eq!(config.mounts[1].container_path, "/dev/termination-log");
        assert_eq!(config.labels[labels::CONTAINER_NAME], "app");
        assert_eq!(config.labels[labels::POD_UID], "uid-1");
        assert_eq!(config.labels[labels::NODE], "node-a");
        assert_eq!(
            config.annotations[labels::CONTAINER_HASH],
            container_hash(container)
        );
        assert_eq!(config.annotations[labels::CONTAINER_RESTART_COUNT], "4");
        assert_eq!(
            config.annotations[labels::TERMINATION_MESSAGE_PATH],
            "/dev/termination-log"
        );
        assert_eq!(
            config.annotations[labels::TERMINATION_MESSAGE_POLICY],
            "File"
        );
        assert_eq!(
            config.annotations[labels::POD_TERMINATION_GRACE_PERIOD],
            "5"
        );
        assert_eq!(config.annotations[labels::CONTAINER_KIND], "regular");
        let linux = config.linux.unwrap();
        let r = linux.resources.unwrap();
        assert_eq!(
            (
                r.cpu_shares,
                r.cpu_quota,
                r.cpu_period,
                r.memory_limit_in_bytes
            ),
            (102, 20_000, 100_000, 64 << 20)
        );
        // Burstable, memory requested at its 64Mi limit on a 16Gi node.
        assert_eq!(r.oom_score_adj, 997);
        assert!(!linux.security_context.unwrap().no_new_privs);
    }

    #[test]
    fn a_relative_mount_path_is_put_under_the_root_on_linux() {
        let mut pod = app_pod();
        let mounts = pod.spec.as_mut().unwrap().containers[0]
            .volume_mounts
            .as_mut()
            .unwrap();
        mounts[0].mount_path = "data/./in".into();
        let container = pod.spec.as_ref().unwrap().containers[0].clone();
        let config = build(&pod, &container, ContainerKind::Regular).unwrap();
        let paths: Vec<&str> = config
            .mounts
            .iter()
            .map(|m| m.container_path.as_str())
            .collect();
        assert_eq!(paths, ["/data/in", "/dev/termination-log"]);
    }

    #[test]
    fn init_containers_are_found_in_their_list() {
        let pod = app_pod();
        let init = &pod.spec.as_ref().unwrap().init_containers.as_ref().unwrap()[0];
        let config = build(&pod, init, ContainerKind::Sidecar).unwrap();
        assert_eq!(config.annotations[labels::CONTAINER_KIND], "sidecar");
        assert_eq!(ContainerKind::Init.as_str(), "init");
        let mut broken = init.clone();
        broken.image = None;
        let error = build(&pod, &broken, ContainerKind::Init)
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "pod ns/web: spec.initContainers[0].image: is missing"
        );
    }

    #[test]
    fn errors_name_the_container_field() {
        let mut pod = app_pod();
        pod.spec.as_mut().unwrap().containers[0]
            .volume_mounts
            .as_mut()
            .unwrap()[0]
            .name = "gone".into();
        let container = pod.spec.as_ref().unwrap().containers[0].clone();
        let error = build(&pod, &container, ContainerKind::Regular)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("spec.containers[0].volumeMounts[0].name"),
            "{error}"
        );
        let mut no_log = container.clone();
        no_log.volume_mounts = None;
        no_log.termination_message_path = Some(String::new());
        let config = build(&pod, &no_log, ContainerKind::Regular).unwrap();
        assert!(config.mounts.is_empty());
        assert_eq!(config.annotations[labels::TERMINATION_MESSAGE_PATH], "");
    }
}
