//! Security profiles as upstream's validation checks them: a seccomp or AppArmor profile's
//! type is `RuntimeDefault`, `Unconfined` or `Localhost`; only a `Localhost` profile names a
//! profile, and it must (seccomp: a relative path that never steps up with `..`, since it is
//! read under the node's `<root-dir>/seccomp`; AppArmor: a name that is not blank); a
//! deprecated AppArmor annotation names a container of the pod and has one of its three
//! value forms. Entry points: `Checks::profiles` (a pod's), `Checks::container_profiles` and
//! `Checks::apparmor_annotations`.

use k8s_openapi::api::core::v1::{AppArmorProfile, Pod, SeccompProfile, SecurityContext};

use super::Checks;
use crate::kind::{all_containers, ephemeral_containers};
use crate::located::FieldPath;
use crate::names::{descending_path_problem, quoted};
use crate::spec::profiles::{
    annotation_profile, APPARMOR_ANNOTATION_PREFIX, LOCALHOST, PROFILE_TYPES,
};

impl Checks<'_, '_> {
    /// The profiles of a container at `path`.
    pub(super) fn container_profiles(
        &mut self,
        security: Option<&SecurityContext>,
        path: &FieldPath,
    ) {
        if let Some(security) = security {
            self.profiles(
                security.seccomp_profile.as_ref(),
                security.app_armor_profile.as_ref(),
                &path.key("securityContext"),
            );
        }
    }

    /// The seccomp and AppArmor profiles of the `securityContext` at `path` (of a pod or a
    /// container).
    pub(super) fn profiles(
        &mut self,
        seccomp: Option<&SeccompProfile>,
        apparmor: Option<&AppArmorProfile>,
        path: &FieldPath,
    ) {
        if let Some(profile) = seccomp {
            self.seccomp_profile(profile, &path.key("seccompProfile"));
        }
        if let Some(profile) = apparmor {
            self.apparmor_profile(profile, &path.key("appArmorProfile"));
        }
    }

    /// The `seccompProfile` at `path` (of a pod or a container).
    fn seccomp_profile(&mut self, profile: &SeccompProfile, path: &FieldPath) {
        let named = profile.localhost_profile.as_deref();
        if self.profile_type(&profile.type_, named.is_some(), path) {
            match named {
                None | Some("") => self.fail(
                    &path.key("localhostProfile"),
                    "required: a Localhost profile names its file",
                ),
                Some(file) => {
                    if let Some(reason) = descending_path_problem(file) {
                        self.fail(&path.key("localhostProfile"), reason);
                    }
                }
            }
        }
    }

    /// The `appArmorProfile` at `path` (of a pod or a container).
    fn apparmor_profile(&mut self, profile: &AppArmorProfile, path: &FieldPath) {
        let named = profile.localhost_profile.as_deref();
        if self.profile_type(&profile.type_, named.is_some(), path)
            && named.is_none_or(|name| name.trim().is_empty())
        {
            self.fail(
                &path.key("localhostProfile"),
                "required: a Localhost profile names a profile loaded on the node",
            );
        }
    }

    /// Checks a profile's type and that only a `Localhost` one names a profile; true when it
    /// is a `Localhost` profile, whose name the caller checks.
    fn profile_type(&mut self, type_: &str, named: bool, path: &FieldPath) -> bool {
        if !PROFILE_TYPES.contains(&type_) {
            self.one_of(&path.key("type"), type_, PROFILE_TYPES);
            return false;
        }
        let localhost = type_ == LOCALHOST;
        if named && !localhost {
            self.fail(
                &path.key("localhostProfile"),
                format!("may only be set when the type is Localhost, not {type_}"),
            );
        }
        localhost
    }

    /// The deprecated per-container AppArmor annotations of `pod`.
    pub(super) fn apparmor_annotations(&mut self, pod: &Pod) {
        let Some(annotations) = &pod.metadata.annotations else {
            return;
        };
        let path = FieldPath::of(&["metadata", "annotations"]);
        let names: Vec<&str> = all_containers(pod)
            .map(|(c, _)| c.name.as_str())
            .chain(ephemeral_containers(pod).map(|c| c.name.as_str()))
            .collect();
        for (key, value) in annotations {
            let Some(container) = key.strip_prefix(APPARMOR_ANNOTATION_PREFIX) else {
                continue;
            };
            if !names.contains(&container) {
                self.fail(
                    &path.key(key),
                    format!("names no container of the pod: {}", quoted(container)),
                );
            }
            let named = annotation_profile(value).filter(|profile| {
                profile
                    .localhost_profile
                    .as_deref()
                    .is_none_or(|name| !name.trim().is_empty())
            });
            if named.is_none() {
                self.fail(
                    &path.key(key),
                    format!(
                        "{} is not an AppArmor profile: runtime/default, unconfined or \
                         localhost/<profile name>",
                        quoted(value)
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::validate::tests::problems;

    fn pod(security: &str, container_security: &str, annotations: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n{annotations}spec:\n{security}  containers:\n  - name: a\n    image: busybox\n{container_security}"
        )
    }

    fn reasons(text: &str) -> Vec<(String, String)> {
        problems(text)
            .into_iter()
            .map(|(_, field, reason)| (field, reason))
            .collect()
    }

    #[test]
    fn good_profiles_pass() {
        let text = pod(
            "  securityContext:\n    seccompProfile:\n      type: Localhost\n      localhostProfile: profiles/audit.json\n    appArmorProfile:\n      type: RuntimeDefault\n",
            "    securityContext:\n      seccompProfile:\n        type: Unconfined\n      appArmorProfile:\n        type: Localhost\n        localhostProfile: k8s-deny-write\n",
            "  annotations:\n    container.apparmor.security.beta.kubernetes.io/a: localhost/k8s-deny-write\n",
        );
        assert_eq!(reasons(&text), Vec::new());
    }

    #[test]
    fn a_seccomp_file_may_not_leave_the_profile_directory() {
        let text = pod(
            "",
            "    securityContext:\n      seccompProfile:\n        type: Localhost\n        localhostProfile: ../../etc/shadow\n",
            "",
        );
        let found = problems(&text);
        assert_eq!(
            found,
            vec![(
                12,
                "spec.containers[0].securityContext.seccompProfile.localhostProfile".to_owned(),
                "must not contain '..'".to_owned()
            )]
        );
    }

    #[test]
    fn types_and_names_are_checked() {
        let text = pod(
            "  securityContext:\n    seccompProfile:\n      type: RuntimeDefault\n      localhostProfile: x.json\n    appArmorProfile:\n      type: Localhost\n",
            "    securityContext:\n      seccompProfile:\n        type: Strict\n      appArmorProfile:\n        type: Localhost\n        localhostProfile: ' '\n",
            "",
        );
        assert_eq!(
            reasons(&text),
            vec![
                (
                    "spec.securityContext.seccompProfile.localhostProfile".to_owned(),
                    "may only be set when the type is Localhost, not RuntimeDefault".to_owned()
                ),
                (
                    "spec.securityContext.appArmorProfile.localhostProfile".to_owned(),
                    "required: a Localhost profile names a profile loaded on the node".to_owned()
                ),
                (
                    "spec.containers[0].securityContext.seccompProfile.type".to_owned(),
                    "unsupported value \"Strict\": supported values: \"RuntimeDefault\", \"Unconfined\", \"Localhost\""
                        .to_owned()
                ),
                (
                    "spec.containers[0].securityContext.appArmorProfile.localhostProfile"
                        .to_owned(),
                    "required: a Localhost profile names a profile loaded on the node".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn apparmor_annotations_name_a_container_and_a_profile() {
        let text = pod(
            "",
            "",
            "  annotations:\n    container.apparmor.security.beta.kubernetes.io/b: runtime/default\n    container.apparmor.security.beta.kubernetes.io/a: enforce\n",
        );
        assert_eq!(
            reasons(&text),
            vec![
                (
                    "metadata.annotations.container.apparmor.security.beta.kubernetes.io/b"
                        .to_owned(),
                    "names no container of the pod: \"b\"".to_owned()
                ),
                (
                    "metadata.annotations.container.apparmor.security.beta.kubernetes.io/a"
                        .to_owned(),
                    "\"enforce\" is not an AppArmor profile: runtime/default, unconfined or localhost/<profile name>".to_owned()
                ),
            ]
        );
    }
}
