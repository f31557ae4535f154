//! A container's Linux security settings: privilege, capabilities, users, read-only root,
//! `no_new_privs`, namespaces, the masked `/proc` and `/sys` paths, and the seccomp, AppArmor
//! and SELinux profiles of [`super::profiles`].

use k8s_cri::v1::{
    Capability, Int64Value, LinuxContainerSecurityContext, SupplementalGroupsPolicy,
};
use k8s_openapi::api::core::v1::{Container, Pod, PodSecurityContext, PodSpec};

use super::profiles::{apparmor, seccomp, selinux};
use super::sandbox::namespace_options;
use crate::context::{NodeContext, SpecError};

/// Paths hidden from unprivileged containers (kernel internals a container has no business
/// reading). containerd 1.6 masks nothing unless the kubelet names them.
const MASKED_PATHS: &[&str] = &[
    "/proc/acpi",
    "/proc/asound",
    "/proc/kcore",
    "/proc/keys",
    "/proc/latency_stats",
    "/proc/timer_list",
    "/proc/timer_stats",
    "/proc/sched_debug",
    "/proc/scsi",
    "/sys/firmware",
    "/sys/devices/virtual/powercap",
];

/// Paths unprivileged containers see read-only.
const READONLY_PATHS: &[&str] = &[
    "/proc/bus",
    "/proc/fs",
    "/proc/irq",
    "/proc/sys",
    "/proc/sysrq-trigger",
];

/// The user an image runs as when the container names none, as the runtime's image status
/// reports it: a uid, or a user name the node cannot map to a uid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageUser {
    /// A numeric user.
    Uid(i64),
    /// A user name (from the image's `USER`), resolved only inside the container.
    Name(String),
}

impl ImageUser {
    /// From the runtime's answer: the uid when it gives one, else the user name, else root —
    /// an image that names no user runs as uid 0, as upstream reads it.
    #[must_use]
    pub fn of(uid: Option<i64>, username: &str) -> Self {
        match uid {
            Some(uid) => Self::Uid(uid),
            None if !username.is_empty() => Self::Name(username.to_owned()),
            None => Self::Uid(0),
        }
    }
}

/// Refuses `container` (at `field`) when its effective `runAsNonRoot` is set, it sets no
/// `runAsUser`, and the image would run it as root: uid 0, or a user name the node cannot
/// check, as upstream does before creating the container. (`runAsUser: 0` with
/// `runAsNonRoot` is refused by [`container_security`].)
///
/// # Errors
///
/// [`SpecError::Field`] at `{field}.securityContext.runAsNonRoot` with the reason.
pub fn check_non_root_image(
    pod: &str,
    spec: &PodSpec,
    container: &Container,
    field: &str,
    user: &ImageUser,
) -> Result<(), SpecError> {
    let sc = container.security_context.as_ref();
    let pod_sc = spec.security_context.as_ref();
    let run_as_non_root = sc
        .and_then(|s| s.run_as_non_root)
        .or_else(|| pod_sc.and_then(|s| s.run_as_non_root))
        .unwrap_or(false);
    let run_as_user = sc
        .and_then(|s| s.run_as_user)
        .or_else(|| pod_sc.and_then(|s| s.run_as_user));
    if !run_as_non_root || run_as_user.is_some() {
        return Ok(());
    }
    let reason = match user {
        ImageUser::Uid(0) => "container has runAsNonRoot and image will run as root".to_owned(),
        ImageUser::Uid(_) => return Ok(()),
        ImageUser::Name(name) => format!(
            "container has runAsNonRoot and image has non-numeric user ({name}), cannot verify user is non-root"
        ),
    };
    Err(SpecError::field(
        pod,
        format!("{field}.securityContext.runAsNonRoot"),
        reason,
    ))
}

/// The security context of `container` (at `field`) of `pod` (shown as `display`), the pod's
/// settings filling in what the container leaves unset, on `node` (its `seccompDefault` and
/// the directory of its `Localhost` seccomp profiles).
///
/// # Errors
///
/// [`SpecError::Field`] naming the setting at fault: contradictions (privileged without
/// privilege escalation, `runAsUser: 0` with `runAsNonRoot`) and unusable profiles.
pub fn container_security(
    display: &str,
    pod: &Pod,
    container: &Container,
    field: &str,
    node: &NodeContext,
) -> Result<LinuxContainerSecurityContext, SpecError> {
    let empty = PodSpec::default();
    let spec = pod.spec.as_ref().unwrap_or(&empty);
    let sc = container.security_context.as_ref();
    let pod_sc = spec.security_context.as_ref();
    let privileged = sc.and_then(|s| s.privileged).unwrap_or(false);
    let allow_escalation = sc.and_then(|s| s.allow_privilege_escalation);
    if privileged && allow_escalation == Some(false) {
        return Err(SpecError::field(
            display,
            format!("{field}.securityContext.allowPrivilegeEscalation"),
            "cannot be false for a privileged container",
        ));
    }
    let run_as_user = sc
        .and_then(|s| s.run_as_user)
        .or_else(|| pod_sc.and_then(|s| s.run_as_user));
    let run_as_non_root = sc
        .and_then(|s| s.run_as_non_root)
        .or_else(|| pod_sc.and_then(|s| s.run_as_non_root))
        .unwrap_or(false);
    if run_as_non_root && run_as_user == Some(0) {
        return Err(SpecError::field(
            display,
            format!("{field}.securityContext.runAsUser"),
            "is 0 (root) but runAsNonRoot is set",
        ));
    }
    let unmasked = privileged || sc.and_then(|s| s.proc_mount.as_deref()) == Some("Unmasked");
    let capabilities = sc.and_then(|s| s.capabilities.as_ref());
    let paths = |list: &[&str]| {
        if unmasked {
            Vec::new()
        } else {
            list.iter().map(ToString::to_string).collect()
        }
    };
    let apparmor = apparmor(display, pod, container, field)?;
    let selinux_options = sc
        .and_then(|s| s.se_linux_options.as_ref())
        .or_else(|| pod_sc.and_then(|s| s.se_linux_options.as_ref()));
    // The profile's name in the deprecated field too, as upstream sends it: runtimes older
    // than the structured field (containerd 1.6) read only the name.
    #[allow(deprecated)]
    Ok(LinuxContainerSecurityContext {
        seccomp: Some(seccomp(display, spec, container, field, node)?),
        apparmor_profile: apparmor
            .as_ref()
            .map(|a| a.name.clone())
            .unwrap_or_default(),
        apparmor: apparmor.map(|a| a.profile),
        selinux_options: selinux(selinux_options),
        capabilities: capabilities.map(|caps| Capability {
            add_capabilities: caps.add.clone().unwrap_or_default(),
            drop_capabilities: caps.drop.clone().unwrap_or_default(),
            ..Default::default()
        }),
        privileged,
        namespace_options: Some(namespace_options(spec)),
        run_as_user: run_as_user.map(|value| Int64Value { value }),
        run_as_group: sc
            .and_then(|s| s.run_as_group)
            .or_else(|| pod_sc.and_then(|s| s.run_as_group))
            .map(|value| Int64Value { value }),
        readonly_rootfs: sc
            .and_then(|s| s.read_only_root_filesystem)
            .unwrap_or(false),
        supplemental_groups: supplemental_groups(pod_sc),
        supplemental_groups_policy: supplemental_groups_policy(display, pod_sc)?,
        // Only an explicit `allowPrivilegeEscalation: false` sets no_new_privs.
        no_new_privs: allow_escalation == Some(false),
        masked_paths: paths(MASKED_PATHS),
        readonly_paths: paths(READONLY_PATHS),
        ..Default::default()
    })
}

/// The pod's `supplementalGroupsPolicy` as the CRI numbers it: `Merge` (the default: the
/// groups of the image's `/etc/group` too) or `Strict` (only the pod's).
///
/// # Errors
///
/// [`SpecError::Field`] for any other value.
pub(super) fn supplemental_groups_policy(
    pod: &str,
    pod_sc: Option<&PodSecurityContext>,
) -> Result<i32, SpecError> {
    let policy = match pod_sc.and_then(|s| s.supplemental_groups_policy.as_deref()) {
        None | Some("Merge") => SupplementalGroupsPolicy::Merge,
        Some("Strict") => SupplementalGroupsPolicy::Strict,
        Some(other) => {
            return Err(SpecError::field(
                pod,
                "spec.securityContext.supplementalGroupsPolicy",
                format!("{other:?} is not a policy (Merge or Strict)"),
            ))
        }
    };
    Ok(policy as i32)
}

/// The groups a pod's processes get besides their own: `fsGroup` first (so they can use the
/// volumes made group-owned by it), then `supplementalGroups`, as upstream sends them.
pub(super) fn supplemental_groups(pod_sc: Option<&PodSecurityContext>) -> Vec<i64> {
    let fs_group = pod_sc.and_then(|s| s.fs_group);
    let listed = pod_sc
        .and_then(|s| s.supplemental_groups.as_deref())
        .unwrap_or_default();
    fs_group.into_iter().chain(listed.iter().copied()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_as_non_root_refuses_an_image_that_would_run_as_root() {
        let non_root = |run_as_user: Option<i64>| Container {
            name: "c".into(),
            security_context: Some(SecurityContext {
                run_as_non_root: Some(true),
                run_as_user,
                ..Default::default()
            }),
            ..Default::default()
        };
        let spec = PodSpec::default();
        let check = |container: &Container, user: ImageUser| {
            check_non_root_image("ns/p", &spec, container, "spec.containers[0]", &user)
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            ImageUser::of(None, ""),
            ImageUser::Uid(0),
            "no user is root"
        );
        assert_eq!(ImageUser::of(Some(7), "x"), ImageUser::Uid(7));
        assert_eq!(ImageUser::of(None, "web"), ImageUser::Name("web".into()));
        assert_eq!(
            check(&non_root(None), ImageUser::Uid(0)),
            Err("pod ns/p: spec.containers[0].securityContext.runAsNonRoot: container has runAsNonRoot and image will run as root".into())
        );
        assert!(check(&non_root(None), ImageUser::Name("web".into()))
            .unwrap_err()
            .contains("non-numeric user (web)"));
        assert_eq!(check(&non_root(None), ImageUser::Uid(1234)), Ok(()));
        assert_eq!(
            check(&non_root(Some(1000)), ImageUser::Uid(0)),
            Ok(()),
            "runAsUser decides"
        );
        let plain = Container::default();
        assert_eq!(check(&plain, ImageUser::Uid(0)), Ok(()), "no runAsNonRoot");
        // The pod's setting counts when the container has none.
        let spec = PodSpec {
            security_context: Some(PodSecurityContext {
                run_as_non_root: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(check_non_root_image("ns/p", &spec, &plain, "f", &ImageUser::Uid(0)).is_err());
    }
    use k8s_cri::v1::NamespaceMode;
    use k8s_openapi::api::core::v1::{Capabilities, PodSecurityContext, SecurityContext};

    fn run(
        spec: &PodSpec,
        sc: Option<SecurityContext>,
    ) -> Result<LinuxContainerSecurityContext, SpecError> {
        let container = Container {
            name: "c".into(),
            security_context: sc,
            ..Default::default()
        };
        let pod = Pod {
            spec: Some(spec.clone()),
            ..Default::default()
        };
        let node = crate::testing::node(std::path::PathBuf::from("/r"));
        container_security("ns/p", &pod, &container, "spec.containers[0]", &node)
    }

    #[test]
    fn defaults_mask_proc_and_allow_escalation() {
        let sc = run(&PodSpec::default(), None).unwrap();
        assert!(!sc.privileged && !sc.no_new_privs && !sc.readonly_rootfs);
        assert!(sc.masked_paths.contains(&"/proc/kcore".to_string()));
        assert!(sc.readonly_paths.contains(&"/proc/sys".to_string()));
        assert_eq!(
            sc.namespace_options.unwrap().pid,
            NamespaceMode::Container as i32
        );
        assert_eq!(sc.run_as_user, None);
    }

    #[test]
    fn container_settings_override_the_pods() {
        let spec = PodSpec {
            security_context: Some(PodSecurityContext {
                run_as_user: Some(1000),
                run_as_group: Some(1000),
                supplemental_groups: Some(vec![5]),
                fs_group: Some(7),
                ..Default::default()
            }),
            share_process_namespace: Some(true),
            ..Default::default()
        };
        let sc = run(
            &spec,
            Some(SecurityContext {
                run_as_user: Some(2000),
                allow_privilege_escalation: Some(false),
                read_only_root_filesystem: Some(true),
                capabilities: Some(Capabilities {
                    add: Some(vec!["NET_ADMIN".into()]),
                    drop: Some(vec!["ALL".into()]),
                }),
                ..Default::default()
            }),
        )
        .unwrap();
        assert_eq!(sc.run_as_user, Some(Int64Value { value: 2000 }));
        assert_eq!(sc.run_as_group, Some(Int64Value { value: 1000 }));
        assert_eq!(
            sc.supplemental_groups,
            vec![7, 5],
            "fsGroup, then the listed groups"
        );
        assert!(sc.no_new_privs && sc.readonly_rootfs);
        let caps = sc.capabilities.unwrap();
        assert_eq!(
            (caps.add_capabilities, caps.drop_capabilities),
            (vec!["NET_ADMIN".to_string()], vec!["ALL".to_string()])
        );
        assert_eq!(sc.namespace_options.unwrap().pid, NamespaceMode::Pod as i32);
    }

    #[test]
    fn privileged_containers_see_everything_and_contradictions_fail() {
        let sc = run(
            &PodSpec::default(),
            Some(SecurityContext {
                privileged: Some(true),
                ..Default::default()
            }),
        )
        .unwrap();
        assert!(sc.privileged && sc.masked_paths.is_empty() && sc.readonly_paths.is_empty());
        let error = run(
            &PodSpec::default(),
            Some(SecurityContext {
                privileged: Some(true),
                allow_privilege_escalation: Some(false),
                ..Default::default()
            }),
        )
        .unwrap_err();
        assert!(
            error.to_string().contains("allowPrivilegeEscalation"),
            "{error}"
        );
        let error = run(
            &PodSpec::default(),
            Some(SecurityContext {
                run_as_user: Some(0),
                run_as_non_root: Some(true),
                ..Default::default()
            }),
        )
        .unwrap_err();
        assert!(error.to_string().contains("runAsNonRoot"), "{error}");
    }
}
