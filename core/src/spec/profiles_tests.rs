use std::collections::BTreeMap;
use std::path::PathBuf;

use k8s_openapi::api::core::v1::{EphemeralContainer, PodSecurityContext, SecurityContext};

use super::*;
use crate::testing::node;

fn seccomp_profile(type_: &str, localhost: Option<&str>) -> SeccompProfile {
    SeccompProfile {
        type_: type_.to_owned(),
        localhost_profile: localhost.map(str::to_owned),
    }
}

fn apparmor_profile(type_: &str, localhost: Option<&str>) -> AppArmorProfile {
    AppArmorProfile {
        type_: type_.to_owned(),
        localhost_profile: localhost.map(str::to_owned),
    }
}

/// A pod whose one container `c` and the pod itself carry the given settings.
fn pod(
    container: Option<SecurityContext>,
    pod_level: Option<PodSecurityContext>,
    annotations: &[(&str, &str)],
) -> Pod {
    let mut pod = Pod::default();
    pod.metadata.annotations = Some(
        annotations
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect::<BTreeMap<_, _>>(),
    );
    pod.spec = Some(PodSpec {
        containers: vec![Container {
            name: "c".into(),
            security_context: container,
            ..Default::default()
        }],
        security_context: pod_level,
        ..Default::default()
    });
    pod
}

fn seccomp_of_pod(pod: &Pod, seccomp_default: bool) -> Result<SecurityProfile, String> {
    let mut node = node(PathBuf::from("/var/lib/kubelet"));
    node.seccomp_default = seccomp_default;
    let spec = pod.spec.as_ref().expect("spec");
    seccomp(
        "ns/p",
        spec,
        &spec.containers[0],
        "spec.containers[0]",
        &node,
    )
    .map_err(|e| e.to_string())
}

fn container_seccomp(profile: SeccompProfile) -> Option<SecurityContext> {
    Some(SecurityContext {
        seccomp_profile: Some(profile),
        ..Default::default()
    })
}

fn pod_seccomp(profile: SeccompProfile) -> Option<PodSecurityContext> {
    Some(PodSecurityContext {
        seccomp_profile: Some(profile),
        ..Default::default()
    })
}

#[test]
fn seccomp_falls_back_to_the_nodes_default() {
    let plain = pod(None, None, &[]);
    assert_eq!(
        seccomp_of_pod(&plain, false),
        Ok(of_type(ProfileType::Unconfined))
    );
    assert_eq!(
        seccomp_of_pod(&plain, true),
        Ok(of_type(ProfileType::RuntimeDefault))
    );
}

#[test]
fn the_containers_seccomp_profile_wins_over_the_pods() {
    let both = pod(
        container_seccomp(seccomp_profile(UNCONFINED, None)),
        pod_seccomp(seccomp_profile(RUNTIME_DEFAULT, None)),
        &[],
    );
    assert_eq!(
        seccomp_of_pod(&both, true),
        Ok(of_type(ProfileType::Unconfined))
    );
    let pod_only = pod(
        None,
        pod_seccomp(seccomp_profile(RUNTIME_DEFAULT, None)),
        &[],
    );
    assert_eq!(
        seccomp_of_pod(&pod_only, false),
        Ok(of_type(ProfileType::RuntimeDefault))
    );
}

#[test]
fn a_localhost_seccomp_profile_is_a_file_under_the_root_dirs_seccomp() {
    let local = pod(
        None,
        pod_seccomp(seccomp_profile(LOCALHOST, Some("profiles/audit.json"))),
        &[],
    );
    assert_eq!(
        seccomp_of_pod(&local, false),
        Ok(SecurityProfile {
            profile_type: ProfileType::Localhost as i32,
            localhost_ref: "/var/lib/kubelet/seccomp/profiles/audit.json".into(),
        })
    );
}

#[test]
fn a_localhost_seccomp_profile_may_not_leave_its_directory() {
    let at = "spec.containers[0].securityContext.seccompProfile";
    for (path, reason) in [
        (Some("../../etc/shadow"), "must not contain '..'"),
        (Some("a/../../b"), "must not contain '..'"),
        (Some("/etc/profile.json"), "must be a relative path"),
        (None, "required: a Localhost profile names its file"),
        (Some(""), "required: a Localhost profile names its file"),
    ] {
        let bad = pod(
            container_seccomp(seccomp_profile(LOCALHOST, path)),
            None,
            &[],
        );
        assert_eq!(
            seccomp_of_pod(&bad, false),
            Err(format!("pod ns/p: {at}.localhostProfile: {reason}")),
            "{path:?}"
        );
    }
    let unknown = pod(None, pod_seccomp(seccomp_profile("Strict", None)), &[]);
    assert_eq!(
        seccomp_of_pod(&unknown, false),
        Err("pod ns/p: spec.securityContext.seccompProfile.type: \"Strict\" is not a profile type (RuntimeDefault, Unconfined, Localhost)".into())
    );
}

fn apparmor_of_pod(pod: &Pod) -> Result<Option<AppArmor>, String> {
    let container = &pod.spec.as_ref().expect("spec").containers[0];
    apparmor("ns/p", pod, container, "spec.containers[0]").map_err(|e| e.to_string())
}

fn container_apparmor(profile: AppArmorProfile) -> Option<SecurityContext> {
    Some(SecurityContext {
        app_armor_profile: Some(profile),
        ..Default::default()
    })
}

fn pod_apparmor(profile: AppArmorProfile) -> Option<PodSecurityContext> {
    Some(PodSecurityContext {
        app_armor_profile: Some(profile),
        ..Default::default()
    })
}

#[test]
fn apparmor_container_then_annotation_then_pod() {
    let annotation = (
        "container.apparmor.security.beta.kubernetes.io/c",
        "localhost/k8s-deny-write",
    );
    let localhost = AppArmor {
        profile: SecurityProfile {
            profile_type: ProfileType::Localhost as i32,
            localhost_ref: "k8s-deny-write".into(),
        },
        name: "localhost/k8s-deny-write".into(),
    };
    let unconfined = AppArmor {
        profile: of_type(ProfileType::Unconfined),
        name: "unconfined".into(),
    };
    let runtime_default = AppArmor {
        profile: of_type(ProfileType::RuntimeDefault),
        name: "runtime/default".into(),
    };
    assert_eq!(
        apparmor_of_pod(&pod(None, None, &[])),
        Ok(None),
        "none named"
    );
    let all = pod(
        container_apparmor(apparmor_profile(UNCONFINED, None)),
        pod_apparmor(apparmor_profile(RUNTIME_DEFAULT, None)),
        &[annotation],
    );
    assert_eq!(apparmor_of_pod(&all), Ok(Some(unconfined)));
    let no_container = pod(
        None,
        pod_apparmor(apparmor_profile(RUNTIME_DEFAULT, None)),
        &[annotation],
    );
    assert_eq!(apparmor_of_pod(&no_container), Ok(Some(localhost)));
    let pod_only = pod(
        None,
        pod_apparmor(apparmor_profile(RUNTIME_DEFAULT, None)),
        &[],
    );
    assert_eq!(apparmor_of_pod(&pod_only), Ok(Some(runtime_default)));
}

#[test]
fn a_localhost_apparmor_profile_needs_a_name() {
    let bad = pod(
        container_apparmor(apparmor_profile(LOCALHOST, Some("  "))),
        None,
        &[],
    );
    assert_eq!(
        apparmor_of_pod(&bad),
        Err("pod ns/p: spec.containers[0].securityContext.appArmorProfile.localhostProfile: required: a Localhost profile names a profile loaded on the node".into())
    );
}

#[test]
fn annotation_values() {
    assert_eq!(
        annotation_profile("runtime/default"),
        Some(apparmor_profile(RUNTIME_DEFAULT, None))
    );
    assert_eq!(
        annotation_profile("unconfined"),
        Some(apparmor_profile(UNCONFINED, None))
    );
    assert_eq!(
        annotation_profile("localhost/p"),
        Some(apparmor_profile(LOCALHOST, Some("p")))
    );
    assert_eq!(annotation_profile("enforce"), None);
}

#[test]
fn apparmor_is_requested_by_any_confining_profile() {
    assert!(!apparmor_requested(&pod(None, None, &[])));
    let unconfined = pod(
        container_apparmor(apparmor_profile(UNCONFINED, None)),
        pod_apparmor(apparmor_profile(UNCONFINED, None)),
        &[(
            "container.apparmor.security.beta.kubernetes.io/c",
            "unconfined",
        )],
    );
    assert!(!apparmor_requested(&unconfined));
    let by_pod = pod(
        None,
        pod_apparmor(apparmor_profile(RUNTIME_DEFAULT, None)),
        &[],
    );
    assert!(apparmor_requested(&by_pod));
    let by_annotation = pod(
        None,
        None,
        &[(
            "container.apparmor.security.beta.kubernetes.io/c",
            "runtime/default",
        )],
    );
    assert!(apparmor_requested(&by_annotation));
    let mut by_ephemeral = pod(None, None, &[]);
    by_ephemeral
        .spec
        .as_mut()
        .expect("spec")
        .ephemeral_containers = Some(vec![EphemeralContainer {
        name: "debug".into(),
        security_context: container_apparmor(apparmor_profile(LOCALHOST, Some("p"))),
        ..Default::default()
    }]);
    assert!(apparmor_requested(&by_ephemeral));
}

#[test]
fn selinux_labels_pass_through() {
    assert_eq!(selinux(None), None);
    let options = SELinuxOptions {
        user: Some("system_u".into()),
        role: Some("system_r".into()),
        type_: Some("container_t".into()),
        level: Some("s0:c1,c2".into()),
    };
    assert_eq!(
        selinux(Some(&options)),
        Some(SeLinuxOption {
            user: "system_u".into(),
            role: "system_r".into(),
            r#type: "container_t".into(),
            level: "s0:c1,c2".into(),
        })
    );
}
