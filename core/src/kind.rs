//! The kinds of container a pod has, and the order they start in.

use std::borrow::Cow;

use k8s_openapi::api::core::v1::{Container, EphemeralContainer, Pod};

/// Which part of a pod's life a container belongs to. It is recorded on the runtime container
/// so a restarted agent knows how to treat the containers it finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContainerKind {
    /// An init container: runs to completion, in order, before the others.
    Init,
    /// An init container with `restartPolicy: Always`: runs beside the regular containers.
    Sidecar,
    /// A regular container of `spec.containers`.
    Regular,
    /// An entry of `spec.ephemeralContainers`, added to a running pod through the
    /// `ephemeralcontainers` subresource (a debugging shell, say): started once, never
    /// restarted, no part of the pod's readiness or phase.
    Ephemeral,
}

impl ContainerKind {
    /// The value of the [`crate::labels::CONTAINER_KIND`] annotation.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ContainerKind::Init => "init",
            ContainerKind::Sidecar => "sidecar",
            ContainerKind::Regular => "regular",
            ContainerKind::Ephemeral => "ephemeral",
        }
    }

    /// The kind a [`crate::labels::CONTAINER_KIND`] annotation names; `None` for another value.
    #[must_use]
    pub fn named(value: &str) -> Option<Self> {
        [Self::Init, Self::Sidecar, Self::Regular, Self::Ephemeral]
            .into_iter()
            .find(|kind| kind.as_str() == value)
    }

    /// The kind of an entry of `spec.initContainers`.
    #[must_use]
    pub fn of_init(container: &Container) -> Self {
        if container.restart_policy.as_deref() == Some("Always") {
            ContainerKind::Sidecar
        } else {
            ContainerKind::Init
        }
    }
}

/// The pod's init containers (sidecars among them) in order, with their kinds.
pub fn init_containers(pod: &Pod) -> impl Iterator<Item = (&Container, ContainerKind)> {
    pod.spec
        .as_ref()
        .and_then(|s| s.init_containers.as_ref())
        .into_iter()
        .flatten()
        .map(|c| (c, ContainerKind::of_init(c)))
}

/// The pod's regular containers in order.
pub fn regular_containers(pod: &Pod) -> impl Iterator<Item = &Container> {
    pod.spec.iter().flat_map(|s| s.containers.iter())
}

/// Every container of the spec in start order: init containers (sidecars among them), then
/// regular containers. Ephemeral containers are not among them: they have no place in that
/// order ([`ephemeral_containers`]).
pub fn all_containers(pod: &Pod) -> impl Iterator<Item = (&Container, ContainerKind)> {
    init_containers(pod).chain(regular_containers(pod).map(|c| (c, ContainerKind::Regular)))
}

/// The pod's ephemeral containers, in the order they were added.
pub fn ephemeral_containers(pod: &Pod) -> impl Iterator<Item = &EphemeralContainer> {
    pod.spec
        .iter()
        .flat_map(|s| s.ephemeral_containers.iter().flatten())
}

/// An ephemeral container as the [`Container`] it is made from: the API defines it with a
/// container's fields (upstream's `EphemeralContainerCommon`) and only `targetContainerName`
/// more, so it is created, reported and reached through the node API as any container is.
#[must_use]
pub fn ephemeral_as_container(ephemeral: &EphemeralContainer) -> Container {
    let e = ephemeral.clone();
    Container {
        args: e.args,
        command: e.command,
        env: e.env,
        env_from: e.env_from,
        image: e.image,
        image_pull_policy: e.image_pull_policy,
        lifecycle: e.lifecycle,
        liveness_probe: e.liveness_probe,
        name: e.name,
        ports: e.ports,
        readiness_probe: e.readiness_probe,
        resize_policy: e.resize_policy,
        resources: e.resources,
        restart_policy: e.restart_policy,
        restart_policy_rules: e.restart_policy_rules,
        security_context: e.security_context,
        startup_probe: e.startup_probe,
        stdin: e.stdin,
        stdin_once: e.stdin_once,
        termination_message_path: e.termination_message_path,
        termination_message_policy: e.termination_message_policy,
        tty: e.tty,
        volume_devices: e.volume_devices,
        volume_mounts: e.volume_mounts,
        working_dir: e.working_dir,
    }
}

/// The pod's container called `name`, of any kind, with its kind: what a start, an exec or a
/// log request by name acts on.
#[must_use]
pub fn container_named<'p>(
    pod: &'p Pod,
    name: &str,
) -> Option<(Cow<'p, Container>, ContainerKind)> {
    if let Some((container, kind)) = all_containers(pod).find(|(c, _)| c.name == name) {
        return Some((Cow::Borrowed(container), kind));
    }
    ephemeral_containers(pod).find(|e| e.name == name).map(|e| {
        (
            Cow::Owned(ephemeral_as_container(e)),
            ContainerKind::Ephemeral,
        )
    })
}

/// The order a terminating pod's running containers stop in, as upstream's (KEP-753): the
/// regular containers together (its ephemeral containers with them), then the sidecars one at a time in the reverse of their order
/// in the spec (a sidecar's preStop hook may still use the sidecars defined before it), then
/// anything else (a plain init container, one the spec no longer names) together. `running`
/// holds each container's name and kind; the answer holds indexes into it, one group per step.
#[must_use]
pub fn termination_groups(pod: Option<&Pod>, running: &[(&str, ContainerKind)]) -> Vec<Vec<usize>> {
    let first = (0..running.len()).filter(|&i| {
        matches!(
            running[i].1,
            ContainerKind::Regular | ContainerKind::Ephemeral
        )
    });
    let mut groups = vec![first.collect::<Vec<usize>>()];
    let sidecars: Vec<&str> = pod
        .map(|pod| {
            init_containers(pod)
                .filter(|(_, kind)| *kind == ContainerKind::Sidecar)
                .map(|(c, _)| c.name.as_str())
                .collect()
        })
        .unwrap_or_default();
    let mut placed: Vec<usize> = groups[0].clone();
    for name in sidecars.iter().rev() {
        let group: Vec<usize> = (0..running.len())
            .filter(|&i| running[i].0 == *name && running[i].1 == ContainerKind::Sidecar)
            .collect();
        placed.extend(&group);
        groups.push(group);
    }
    groups.push((0..running.len()).filter(|i| !placed.contains(i)).collect());
    groups.retain(|group| !group.is_empty());
    groups
}

#[cfg(test)]
mod termination_tests {
    use super::*;
    use k8s_openapi::api::core::v1::PodSpec;

    fn pod() -> Pod {
        let container = |name: &str, always: bool| Container {
            name: name.to_owned(),
            restart_policy: always.then(|| "Always".to_owned()),
            ..Container::default()
        };
        Pod {
            spec: Some(PodSpec {
                init_containers: Some(vec![
                    container("proxy", true),
                    container("setup", false),
                    container("hook", true),
                ]),
                containers: vec![container("app", false), container("web", false)],
                ..PodSpec::default()
            }),
            ..Pod::default()
        }
    }

    #[test]
    fn regular_containers_stop_first_then_sidecars_last_defined_first() {
        use ContainerKind::{Init, Regular, Sidecar};
        let running = [
            ("proxy", Sidecar),
            ("app", Regular),
            ("hook", Sidecar),
            ("web", Regular),
            ("setup", Init),
        ];
        assert_eq!(
            termination_groups(Some(&pod()), &running),
            vec![vec![1, 3], vec![2], vec![0], vec![4]]
        );
    }

    #[test]
    fn ephemeral_containers_stop_with_the_regular_ones() {
        use ContainerKind::{Ephemeral, Regular, Sidecar};
        let running = [("debug", Ephemeral), ("proxy", Sidecar), ("app", Regular)];
        assert_eq!(
            termination_groups(Some(&pod()), &running),
            vec![vec![0, 2], vec![1]]
        );
    }

    #[test]
    fn a_container_is_found_by_name_whatever_its_kind() {
        let mut pod = pod();
        pod.spec.as_mut().unwrap().ephemeral_containers = Some(vec![EphemeralContainer {
            name: "debug".to_owned(),
            image: Some("shell:1".to_owned()),
            tty: Some(true),
            target_container_name: Some("app".to_owned()),
            ..EphemeralContainer::default()
        }]);
        let (debug, kind) = container_named(&pod, "debug").unwrap();
        assert_eq!(kind, ContainerKind::Ephemeral);
        assert_eq!(
            (debug.image.as_deref(), debug.tty),
            (Some("shell:1"), Some(true))
        );
        assert!(matches!(
            container_named(&pod, "app"),
            Some((Cow::Borrowed(_), ContainerKind::Regular))
        ));
        assert_eq!(
            container_named(&pod, "setup").unwrap().1,
            ContainerKind::Init
        );
        assert!(container_named(&pod, "gone").is_none());
        assert_eq!(
            all_containers(&pod).count(),
            5,
            "ephemeral containers are apart"
        );
        assert_eq!(
            ContainerKind::named("ephemeral"),
            Some(ContainerKind::Ephemeral)
        );
    }

    #[test]
    fn without_the_spec_sidecars_stop_together_after_the_regular_ones() {
        use ContainerKind::{Regular, Sidecar};
        let running = [("proxy", Sidecar), ("app", Regular), ("hook", Sidecar)];
        assert_eq!(
            termination_groups(None, &running),
            vec![vec![1], vec![0, 2]]
        );
        assert!(termination_groups(None, &[]).is_empty());
    }
}
