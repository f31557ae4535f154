//! [`WindowsOptions`]: the `securityContext.windowsOptions` a container runs with, its own
//! settings over the pod's one field at a time, as upstream's effective security context is
//! computed.

use k8s_openapi::api::core::v1::{Container, PodSpec, WindowsSecurityContextOptions};

/// The Windows identity settings in force for a pod or a container.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct WindowsOptions {
    /// `runAsUserName`: the Windows user the entry point runs as.
    pub run_as_user_name: Option<String>,
    /// `gmsaCredentialSpec`: the full JSON credential spec of a group managed service account
    /// (the admission webhook fills it in from `gmsaCredentialSpecName`).
    pub gmsa_credential_spec: Option<String>,
    /// `hostProcess`: whether the container runs on the host rather than in a container.
    pub host_process: Option<bool>,
}

impl WindowsOptions {
    /// The pod-level `spec.securityContext.windowsOptions`.
    pub fn of_pod(spec: &PodSpec) -> Self {
        Self::from_api(
            spec.security_context
                .as_ref()
                .and_then(|sc| sc.windows_options.as_ref()),
        )
    }

    /// The container's `securityContext.windowsOptions`, each field unset there taken from
    /// the pod.
    pub fn of_container(spec: &PodSpec, container: &Container) -> Self {
        let pod = Self::of_pod(spec);
        let own = Self::from_api(
            container
                .security_context
                .as_ref()
                .and_then(|sc| sc.windows_options.as_ref()),
        );
        Self {
            run_as_user_name: own.run_as_user_name.or(pod.run_as_user_name),
            gmsa_credential_spec: own.gmsa_credential_spec.or(pod.gmsa_credential_spec),
            host_process: own.host_process.or(pod.host_process),
        }
    }

    fn from_api(options: Option<&WindowsSecurityContextOptions>) -> Self {
        options.map_or_else(Self::default, |o| Self {
            run_as_user_name: o.run_as_user_name.clone(),
            gmsa_credential_spec: o.gmsa_credential_spec.clone(),
            host_process: o.host_process,
        })
    }
}
