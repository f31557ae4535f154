//! The kinds of container a pod has, and the order they start in.

use k8s_openapi::api::core::v1::{Container, Pod};

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
}

impl ContainerKind {
    /// The value of the [`crate::labels::CONTAINER_KIND`] annotation.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ContainerKind::Init => "init",
            ContainerKind::Sidecar => "sidecar",
            ContainerKind::Regular => "regular",
        }
    }

    /// The kind a [`crate::labels::CONTAINER_KIND`] annotation names; `None` for another value.
    #[must_use]
    pub fn named(value: &str) -> Option<Self> {
        [Self::Init, Self::Sidecar, Self::Regular]
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
/// regular containers.
pub fn all_containers(pod: &Pod) -> impl Iterator<Item = (&Container, ContainerKind)> {
    init_containers(pod).chain(regular_containers(pod).map(|c| (c, ContainerKind::Regular)))
}

/// The order a terminating pod's running containers stop in, as upstream's (KEP-753): the
/// regular containers together, then the sidecars one at a time in the reverse of their order
/// in the spec (a sidecar's preStop hook may still use the sidecars defined before it), then
/// anything else (a plain init container, one the spec no longer names) together. `running`
/// holds each container's name and kind; the answer holds indexes into it, one group per step.
#[must_use]
pub fn termination_groups(pod: Option<&Pod>, running: &[(&str, ContainerKind)]) -> Vec<Vec<usize>> {
    let of_kind = |kind: ContainerKind| -> Vec<usize> {
        (0..running.len())
            .filter(|&i| running[i].1 == kind)
            .collect()
    };
    let mut groups = vec![of_kind(ContainerKind::Regular)];
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
