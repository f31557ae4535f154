//! A container's volume mounts as upstream's validation checks them: each names a declared
//! volume, at a `mountPath` no other mount of the container uses, and its `subPath` or
//! `subPathExpr` (not both) is a relative path that never steps up with `..`. A `mountPath`
//! need not be absolute, nor be a Linux path: it is a path inside the container, which the
//! node makes absolute for its OS (`C:\data` on a Windows node; `crate::spec` does it). These are
//! the static rules; where a subPath leads on disk (symlinks included) is checked when the
//! volume is mounted. Entry point: `Checks::mounts`.

use std::collections::{HashMap, HashSet};

use k8s_openapi::api::core::v1::Container;

use super::Checks;
use crate::limits::MAX_VOLUME_MOUNTS;
use crate::located::FieldPath;
use crate::names::descending_path_problem;

impl Checks<'_, '_> {
    pub(super) fn mounts(
        &mut self,
        container: &Container,
        path: &FieldPath,
        volumes: &HashSet<&str>,
    ) {
        let mounts = container.volume_mounts.as_deref().unwrap_or_default();
        let list = path.key("volumeMounts");
        if !self.at_most(&list, mounts.len(), MAX_VOLUME_MOUNTS, "volume mounts") {
            return;
        }
        let mut targets: HashMap<&str, usize> = HashMap::new();
        for (index, mount) in mounts.iter().enumerate() {
            let mount_path = list.index(index);
            if !volumes.contains(mount.name.as_str()) {
                self.fail(
                    &mount_path.key("name"),
                    format!("volume \"{}\" is not declared in spec.volumes", mount.name),
                );
            }
            let target = mount.mount_path.as_str();
            let target_path = mount_path.key("mountPath");
            if target.is_empty() {
                self.fail(&target_path, "required: a mount needs a path");
            } else if target.contains('\0') {
                self.fail(&target_path, "must not contain a NUL character");
            } else if let Some(first) = targets.get(target) {
                self.fail(
                    &target_path,
                    format!("must be unique: volumeMounts[{first}] mounts at the same path"),
                );
            } else {
                targets.insert(target, index);
            }
            let sub_path = mount.sub_path.as_deref().filter(|p| !p.is_empty());
            let expression = mount.sub_path_expr.as_deref().filter(|p| !p.is_empty());
            if sub_path.is_some() && expression.is_some() {
                self.fail(
                    &mount_path.key("subPathExpr"),
                    "subPath and subPathExpr are mutually exclusive",
                );
            }
            // A subPathExpr is expanded later; its text is held to the same rules now.
            for (key, value) in [("subPath", sub_path), ("subPathExpr", expression)] {
                if let Some(reason) = value.and_then(descending_path_problem) {
                    self.fail(&mount_path.key(key), reason);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::validate::tests::problems;

    fn mounts(lines: &str) -> Vec<(usize, String, String)> {
        problems(&format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: a\n    image: busybox\n    volumeMounts:\n{lines}  volumes:\n  - name: data\n    emptyDir: {{}}\n"
        ))
    }

    #[test]
    fn good_mounts_pass() {
        let found = mounts("    - name: data\n      mountPath: /a\n      subPath: x/y\n    - name: data\n      mountPath: /b\n      subPathExpr: $(POD_NAME)\n");
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn sub_paths_that_climb_or_start_at_the_root_are_refused() {
        let found = mounts("    - name: data\n      mountPath: /a\n      subPath: ../../etc\n    - name: data\n      mountPath: /b\n      subPath: /etc\n    - name: data\n      mountPath: /c\n      subPathExpr: $(X)/../..\n");
        let expected = [
            (
                12,
                "spec.containers[0].volumeMounts[0].subPath",
                "must not contain '..'",
            ),
            (
                15,
                "spec.containers[0].volumeMounts[1].subPath",
                "must be a relative path",
            ),
            (
                18,
                "spec.containers[0].volumeMounts[2].subPathExpr",
                "must not contain '..'",
            ),
        ];
        let found: Vec<(usize, &str, &str)> = found
            .iter()
            .map(|p| (p.0, p.1.as_str(), p.2.as_str()))
            .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn any_mount_path_is_taken_as_upstream_takes_it_an_empty_one_is_not() {
        // (mountPath as written in YAML, the problem with it)
        let cases = [
            ("/data", None),
            ("data", None),
            ("'C:\\scratch'", None),
            ("'c:/scratch'", None),
            ("'\\\\server\\share'", None),
            ("'../up'", None),
            ("''", Some("required: a mount needs a path")),
            ("\"/a\\0b\"", Some("must not contain a NUL character")),
        ];
        for (path, problem) in cases {
            let found = mounts(&format!("    - name: data\n      mountPath: {path}\n"));
            let reasons: Vec<&str> = found.iter().map(|p| p.2.as_str()).collect();
            assert_eq!(reasons, Vec::from_iter(problem), "{path}");
        }
    }

    #[test]
    fn mount_paths_are_unique_and_sub_paths_exclusive() {
        let found = mounts("    - name: data\n      mountPath: rel\n    - name: data\n      mountPath: /x\n    - name: data\n      mountPath: /x\n      subPath: a\n      subPathExpr: b\n");
        let found: Vec<(usize, &str, &str)> = found
            .iter()
            .map(|p| (p.0, p.1.as_str(), p.2.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (
                    15,
                    "spec.containers[0].volumeMounts[2].mountPath",
                    "must be unique: volumeMounts[1] mounts at the same path"
                ),
                (
                    17,
                    "spec.containers[0].volumeMounts[2].subPathExpr",
                    "subPath and subPathExpr are mutually exclusive"
                ),
            ]
        );
    }
}
