//! The Windows halves of a pod's CRI configurations: [`sandbox_windows`] for the sandbox
//! (`WindowsPodSandboxConfig`) and [`container_windows`] for a container
//! (`WindowsContainerConfig`), as upstream's Windows kubelet fills them.
//!
//! Windows has no cgroups: a container's cpu and memory limits become job-object limits
//! ([`resources::windows_resources`]), its identity a Windows user name or a gMSA credential
//! spec, and HostProcess containers run on the host itself, which only a pod made entirely of
//! them, on the host network, may ask for ([`host_process::host_process_pod`]).

mod host_process;
mod options;
mod paths;
mod resources;

#[cfg(test)]
mod tests;

use k8s_cri::v1::{
    WindowsContainerConfig, WindowsContainerSecurityContext, WindowsPodSandboxConfig,
    WindowsSandboxSecurityContext,
};
use k8s_openapi::api::core::v1::{Container, PodSpec};

use super::quantity::Amounts;
use super::security::ImageUser;
use crate::context::SpecError;
use options::WindowsOptions;

pub use host_process::host_process_pod;
pub use paths::{drive_rooted, volume_mount_path, WINDOWS_ETC_HOSTS};
pub use resources::{cpu_maximum, windows_resources};

/// The sandbox's Windows settings: the pod-level `runAsUserName` and gMSA credential spec, and
/// `host_process` when the pod's containers are HostProcess containers.
///
/// # Errors
///
/// [`SpecError::Field`] when the pod mixes HostProcess and other containers, sets a
/// container's `hostProcess` against the pod's, or asks for HostProcess without
/// `spec.hostNetwork` (see [`host_process_pod`]).
pub fn sandbox_windows(pod: &str, spec: &PodSpec) -> Result<WindowsPodSandboxConfig, SpecError> {
    let host_process = host_process_pod(pod, spec)?;
    let options = WindowsOptions::of_pod(spec);
    Ok(WindowsPodSandboxConfig {
        security_context: Some(WindowsSandboxSecurityContext {
            run_as_username: options.run_as_user_name.unwrap_or_default(),
            credential_spec: options.gmsa_credential_spec.unwrap_or_default(),
            host_process,
            // Upstream sends namespace options only behind the WindowsHostNetwork gate, which
            // is off by default and deprecated.
            namespace_options: None,
        }),
    })
}

/// A container's Windows settings: job-object resources from its limits on a node of
/// `processors` logical processors, and its security context: the image's user unless
/// `windowsOptions.runAsUserName` names another, the gMSA credential spec and `host_process`,
/// the container's `windowsOptions` over the pod's field by field.
///
/// # Errors
///
/// [`SpecError::Field`] for a pod whose HostProcess settings are refused (see
/// [`host_process_pod`]).
pub fn container_windows(
    pod: &str,
    spec: &PodSpec,
    container: &Container,
    limits: &Amounts,
    image_user: &ImageUser,
    processors: u32,
) -> Result<WindowsContainerConfig, SpecError> {
    host_process_pod(pod, spec)?;
    let options = WindowsOptions::of_container(spec, container);
    let image_user_name = match image_user {
        ImageUser::Name(name) => name.clone(),
        ImageUser::Uid(_) => String::new(),
    };
    Ok(WindowsContainerConfig {
        resources: Some(windows_resources(limits, processors)),
        security_context: Some(WindowsContainerSecurityContext {
            run_as_username: options.run_as_user_name.unwrap_or(image_user_name),
            credential_spec: options.gmsa_credential_spec.unwrap_or_default(),
            host_process: options.host_process == Some(true),
        }),
    })
}
