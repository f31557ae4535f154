//! The container a hook or probe acts on: its runtime ID (for exec), its spec (for named
//! ports) and the pod's IP (the default host of network handlers).

use sergeant_messages::pods::core::Container;

/// A running container as hooks and probes address it.
#[derive(Debug, Clone, Copy)]
pub struct ContainerTarget<'a> {
    /// Its runtime ID.
    pub container_id: &'a str,
    /// Its spec.
    pub container: &'a Container,
    /// The pod's IP, if the sandbox has one.
    pub pod_ip: Option<&'a str>,
}
