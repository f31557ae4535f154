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
