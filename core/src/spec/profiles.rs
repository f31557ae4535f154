//! The security profiles a container runs under — seccomp, AppArmor and SELinux labels —
//! chosen as upstream chooses them: the container's own setting first, then (AppArmor only)
//! the deprecated per-container annotation, then the pod's; a container with no seccomp
//! profile anywhere gets the node's `seccompDefault`. A `Localhost` seccomp profile is a file
//! under `<root-dir>/seccomp`, named by a path that may not leave that directory. Entry
//! points: [`seccomp`], [`apparmor`], [`selinux`] for the CRI configuration, and
//! [`apparmor_requested`] for admission on a node without AppArmor.

use k8s_cri::v1::{security_profile::ProfileType, SeLinuxOption, SecurityProfile};
use k8s_openapi::api::core::v1::{
    AppArmorProfile, Container, Pod, PodSpec, SELinuxOptions, SeccompProfile,
};

use crate::context::{NodeContext, SpecError};
use crate::kind::{all_containers, ephemeral_containers};
use crate::names::{descending_path_problem, quoted};

/// The profile type that asks for the runtime's default profile.
pub const RUNTIME_DEFAULT: &str = "RuntimeDefault";
/// The profile type that asks for no profile.
pub const UNCONFINED: &str = "Unconfined";
/// The profile type that names a profile installed on the node.
pub const LOCALHOST: &str = "Localhost";
/// The profile types the API knows, for seccomp and AppArmor alike.
pub const PROFILE_TYPES: &[&str] = &[RUNTIME_DEFAULT, UNCONFINED, LOCALHOST];

/// The directory under the kubelet root that `Localhost` seccomp profiles are read from.
const SECCOMP_DIR: &str = "seccomp";

/// The deprecated annotation (`<prefix><container name>`) that names a container's AppArmor
/// profile; still read for static pods, whose annotations no API server turned into fields.
pub const APPARMOR_ANNOTATION_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";
/// The deprecated annotation value (and CRI profile name) of the runtime's default profile.
const APPARMOR_RUNTIME_DEFAULT: &str = "runtime/default";
/// The deprecated annotation value (and CRI profile name) of no profile.
const APPARMOR_UNCONFINED: &str = "unconfined";
/// The deprecated annotation value prefix (and CRI profile name prefix) of a node's profile.
const APPARMOR_LOCALHOST_PREFIX: &str = "localhost/";

/// The AppArmor profile handed to the runtime, in both forms the CRI carries: the structured
/// profile, and the deprecated name older runtimes read.
#[derive(Debug, Clone, PartialEq)]
pub struct AppArmor {
    /// The structured profile (`apparmor`).
    pub profile: SecurityProfile,
    /// The deprecated name (`apparmor_profile`): `runtime/default`, `unconfined` or
    /// `localhost/<name>`.
    pub name: String,
}

/// The seccomp profile of `container` (at `field`) of pod `pod`: the container's, else the
/// pod's, else `RuntimeDefault` when the node's `seccompDefault` is on and `Unconfined` when
/// it is off.
///
/// # Errors
///
/// [`SpecError::Field`] naming the `seccompProfile` at fault: an unknown type, a `Localhost`
/// profile without a `localhostProfile`, or one whose path would leave `<root-dir>/seccomp`.
pub fn seccomp(
    pod: &str,
    spec: &PodSpec,
    container: &Container,
    field: &str,
    node: &NodeContext,
) -> Result<SecurityProfile, SpecError> {
    let own = container
        .security_context
        .as_ref()
        .and_then(|sc| sc.seccomp_profile.as_ref())
        .map(|profile| (profile, format!("{field}.securityContext.seccompProfile")));
    let pods = || {
        spec.security_context
            .as_ref()
            .and_then(|sc| sc.seccomp_profile.as_ref())
            .map(|profile| (profile, "spec.securityContext.seccompProfile".to_owned()))
    };
    match own.or_else(pods) {
        Some((profile, at)) => seccomp_of(pod, profile, &at, node),
        None if node.seccomp_default => Ok(of_type(ProfileType::RuntimeDefault)),
        None => Ok(of_type(ProfileType::Unconfined)),
    }
}

fn seccomp_of(
    pod: &str,
    profile: &SeccompProfile,
    at: &str,
    node: &NodeContext,
) -> Result<SecurityProfile, SpecError> {
    match profile.type_.as_str() {
        RUNTIME_DEFAULT => Ok(of_type(ProfileType::RuntimeDefault)),
        UNCONFINED => Ok(of_type(ProfileType::Unconfined)),
        LOCALHOST => {
            let at = format!("{at}.localhostProfile");
            let path = profile
                .localhost_profile
                .as_deref()
                .filter(|path| !path.is_empty())
                .ok_or_else(|| {
                    SpecError::field(pod, &at, "required: a Localhost profile names its file")
                })?;
            if let Some(reason) = descending_path_problem(path) {
                return Err(SpecError::field(pod, &at, reason));
            }
            let file = node.root_dir.join(SECCOMP_DIR).join(path);
            Ok(SecurityProfile {
                profile_type: ProfileType::Localhost as i32,
                localhost_ref: file.display().to_string(),
            })
        }
        other => Err(unknown_type(pod, at, other)),
    }
}

/// The AppArmor profile of `container` (at `field`) of `pod` (shown as `display`): the
/// container's, else its deprecated annotation, else the pod's; `None` when none is named,
/// and the runtime decides.
///
/// # Errors
///
/// [`SpecError::Field`] naming the `appArmorProfile` (or annotation) at fault: an unknown
/// type, or a `Localhost` profile without a name.
pub fn apparmor(
    display: &str,
    pod: &Pod,
    container: &Container,
    field: &str,
) -> Result<Option<AppArmor>, SpecError> {
    let own = container
        .security_context
        .as_ref()
        .and_then(|sc| sc.app_armor_profile.clone())
        .map(|profile| (profile, format!("{field}.securityContext.appArmorProfile")));
    let annotated = || {
        let key = format!("{APPARMOR_ANNOTATION_PREFIX}{}", container.name);
        let value = pod.metadata.annotations.as_ref()?.get(&key)?;
        Some((
            annotation_profile(value)?,
            format!("metadata.annotations[{key}]"),
        ))
    };
    let pods = || {
        pod.spec
            .as_ref()?
            .security_context
            .as_ref()?
            .app_armor_profile
            .clone()
            .map(|profile| (profile, "spec.securityContext.appArmorProfile".to_owned()))
    };
    own.or_else(annotated)
        .or_else(pods)
        .map(|(profile, at)| apparmor_of(display, &profile, &at))
        .transpose()
}

fn apparmor_of(pod: &str, profile: &AppArmorProfile, at: &str) -> Result<AppArmor, SpecError> {
    match profile.type_.as_str() {
        RUNTIME_DEFAULT => Ok(AppArmor {
            profile: of_type(ProfileType::RuntimeDefault),
            name: APPARMOR_RUNTIME_DEFAULT.to_owned(),
        }),
        UNCONFINED => Ok(AppArmor {
            profile: of_type(ProfileType::Unconfined),
            name: APPARMOR_UNCONFINED.to_owned(),
        }),
        LOCALHOST => {
            let name = profile
                .localhost_profile
                .as_deref()
                .filter(|name| !name.trim().is_empty())
                .ok_or_else(|| {
                    SpecError::field(
                        pod,
                        format!("{at}.localhostProfile"),
                        "required: a Localhost profile names a profile loaded on the node",
                    )
                })?;
            Ok(AppArmor {
                profile: SecurityProfile {
                    profile_type: ProfileType::Localhost as i32,
                    localhost_ref: name.to_owned(),
                },
                name: format!("{APPARMOR_LOCALHOST_PREFIX}{name}"),
            })
        }
        other => Err(unknown_type(pod, at, other)),
    }
}

/// The profile a deprecated AppArmor annotation value names; `None` for a value that is not
/// one of the three forms (upstream ignores it; validation refuses it).
#[must_use]
pub fn annotation_profile(value: &str) -> Option<AppArmorProfile> {
    let (type_, localhost_profile) = match value {
        APPARMOR_RUNTIME_DEFAULT => (RUNTIME_DEFAULT, None),
        APPARMOR_UNCONFINED => (UNCONFINED, None),
        _ => (
            LOCALHOST,
            Some(value.strip_prefix(APPARMOR_LOCALHOST_PREFIX)?.to_owned()),
        ),
    };
    Some(AppArmorProfile {
        type_: type_.to_owned(),
        localhost_profile,
    })
}

/// Whether any of `pod`'s containers would run under an AppArmor profile other than
/// `Unconfined` (by field or deprecated annotation): such a pod cannot run as asked on a node
/// whose kernel does not enforce AppArmor, and upstream refuses it there (reason `AppArmor`).
#[must_use]
pub fn apparmor_requested(pod: &Pod) -> bool {
    let confining =
        |profile: Option<&AppArmorProfile>| profile.is_some_and(|p| p.type_ != UNCONFINED);
    let pods = pod
        .spec
        .as_ref()
        .and_then(|spec| spec.security_context.as_ref())
        .and_then(|sc| sc.app_armor_profile.as_ref());
    let containers = all_containers(pod)
        .filter_map(|(c, _)| c.security_context.as_ref()?.app_armor_profile.as_ref());
    let ephemeral = ephemeral_containers(pod)
        .filter_map(|c| c.security_context.as_ref()?.app_armor_profile.as_ref());
    let annotated = pod
        .metadata
        .annotations
        .iter()
        .flatten()
        .any(|(key, value)| {
            key.starts_with(APPARMOR_ANNOTATION_PREFIX) && value != APPARMOR_UNCONFINED
        });
    confining(pods) || containers.chain(ephemeral).any(|p| confining(Some(p))) || annotated
}

/// The SELinux labels of `options` as the CRI carries them; `None` when none are set. (On a
/// host without SELinux the runtime leaves them unused.)
#[must_use]
pub fn selinux(options: Option<&SELinuxOptions>) -> Option<SeLinuxOption> {
    options.map(|options| SeLinuxOption {
        user: options.user.clone().unwrap_or_default(),
        role: options.role.clone().unwrap_or_default(),
        r#type: options.type_.clone().unwrap_or_default(),
        level: options.level.clone().unwrap_or_default(),
    })
}

/// A profile of `profile_type` that names no file.
#[must_use]
pub fn of_type(profile_type: ProfileType) -> SecurityProfile {
    SecurityProfile {
        profile_type: profile_type as i32,
        localhost_ref: String::new(),
    }
}

fn unknown_type(pod: &str, at: &str, found: &str) -> SpecError {
    SpecError::field(
        pod,
        format!("{at}.type"),
        format!(
            "{} is not a profile type ({})",
            quoted(found),
            PROFILE_TYPES.join(", ")
        ),
    )
}

#[cfg(test)]
#[path = "profiles_tests.rs"]
mod tests;
