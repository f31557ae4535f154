//! Whether a pod is a HostProcess pod, and whether it may be one.
//!
//! The API server refuses such pods, but static pods never pass through it, so the node
//! checks again before it creates anything: a pod whose containers run on the host must be
//! made only of HostProcess containers and use the host network.

use k8s_openapi::api::core::v1::{Container, PodSpec};

use crate::context::SpecError;

/// The field of a container's own `hostProcess` setting.
const HOST_PROCESS: &str = "securityContext.windowsOptions.hostProcess";

/// Whether `spec` is a HostProcess pod: some container (init or regular) runs as a
/// HostProcess container, by its own setting or the pod's.
///
/// # Errors
///
/// [`SpecError::Field`] naming the field at fault when a container's `hostProcess` differs
/// from the pod's, when the pod mixes HostProcess and other containers, or when it has
/// HostProcess containers without `spec.hostNetwork: true`.
pub fn host_process_pod(pod: &str, spec: &PodSpec) -> Result<bool, SpecError> {
    let of_pod = spec
        .security_context
        .as_ref()
        .and_then(|sc| sc.windows_options.as_ref())
        .and_then(|o| o.host_process);
    let containers = containers_with_fields(spec);
    let mut host_process = Vec::new();
    let mut other = None;
    for (field, container) in &containers {
        let own = container
            .security_context
            .as_ref()
            .and_then(|sc| sc.windows_options.as_ref())
            .and_then(|o| o.host_process);
        if let (Some(of_pod), Some(own)) = (of_pod, own) {
            if of_pod != own {
                return Err(SpecError::field(
                    pod,
                    format!("{field}.{HOST_PROCESS}"),
                    format!(
                        "is {own} but the pod's spec.securityContext.windowsOptions.hostProcess \
                         is {of_pod}; they must be the same when both are set"
                    ),
                ));
            }
        }
        if own.or(of_pod) == Some(true) {
            host_process.push(field.as_str());
        } else if other.is_none() {
            other = Some(field.as_str());
        }
    }
    let Some(first) = host_process.first() else {
        return Ok(false);
    };
    if let Some(other) = other {
        return Err(SpecError::field(
            pod,
            format!("{other}.{HOST_PROCESS}"),
            format!(
                "is not true while {first} is a HostProcess container; a pod with any \
                 HostProcess container must be made only of HostProcess containers"
            ),
        ));
    }
    if spec.host_network != Some(true) {
        return Err(SpecError::field(
            pod,
            "spec.hostNetwork",
            format!(
                "must be true: {first} is a HostProcess container, and HostProcess pods run \
                 on the host network"
            ),
        ));
    }
    Ok(true)
}

/// Init containers then regular ones, each with its field path.
fn containers_with_fields(spec: &PodSpec) -> Vec<(String, &Container)> {
    let init = spec
        .init_containers
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| (format!("spec.initContainers[{i}]"), c));
    let regular = spec
        .containers
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("spec.containers[{i}]"), c));
    init.chain(regular).collect()
}
