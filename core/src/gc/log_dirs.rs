//! Pod log directories (`<pod log root>/<namespace>_<name>_<uid>`) whose pod is gone: which
//! ones they are. Listing them is `sergeant_host::log_dirs`'s, removing them the GC actor's.
//!
//! The log root is shared by every agent of the host (and by pods of other runtimes' nodes), so
//! a directory is only taken when no pod that exists and no runtime object at all carries its
//! UID.

use std::collections::BTreeSet;

use super::RuntimeObjects;
use crate::labels;

/// The pod UID a log directory name ends with; `None` for a name not shaped
/// `<namespace>_<name>_<uid>`.
#[must_use]
pub fn pod_uid(dir_name: &str) -> Option<&str> {
    let mut parts = dir_name.split('_');
    let (namespace, name, uid) = (parts.next()?, parts.next()?, parts.next()?);
    let shaped = parts.next().is_none() && [namespace, name, uid].iter().all(|p| !p.is_empty());
    shaped.then_some(uid)
}

/// The directories of `dir_names` that belong to no existing pod and to no object of
/// `runtime`.
#[must_use]
pub fn stale(
    dir_names: &[String],
    runtime: RuntimeObjects<'_>,
    existing: &BTreeSet<String>,
) -> Vec<String> {
    let in_runtime: BTreeSet<&str> = runtime
        .containers
        .iter()
        .map(|c| &c.labels)
        .chain(runtime.sandboxes.iter().map(|s| &s.labels))
        .filter_map(|l| l.get(labels::POD_UID).map(String::as_str))
        .collect();
    dir_names
        .iter()
        .filter(|name| {
            pod_uid(name).is_some_and(|uid| !existing.contains(uid) && !in_runtime.contains(uid))
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use k8s_cri::v1 as cri;

    use super::*;

    #[test]
    fn the_uid_is_the_last_of_three_parts() {
        assert_eq!(pod_uid("ns_web_1234-abcd"), Some("1234-abcd"));
        assert_eq!(pod_uid("ns_web"), None);
        assert_eq!(pod_uid("ns_web_uid_extra"), None);
        assert_eq!(pod_uid("ns__uid"), None);
        assert_eq!(pod_uid("lost+found"), None);
    }

    #[test]
    fn a_directory_is_stale_only_without_pod_and_runtime_object() {
        let with_uid = |uid: &str| HashMap::from([(labels::POD_UID.to_owned(), uid.to_owned())]);
        let containers = [cri::Container {
            labels: with_uid("has-container"),
            ..Default::default()
        }];
        let sandboxes = [cri::PodSandbox {
            labels: with_uid("has-sandbox"),
            ..Default::default()
        }];
        let runtime = RuntimeObjects {
            containers: &containers,
            sandboxes: &sandboxes,
        };
        let existing = BTreeSet::from(["exists".to_owned()]);
        let dirs: Vec<String> = [
            "ns_a_exists",
            "ns_b_has-container",
            "ns_c_has-sandbox",
            "ns_d_gone",
            "odd-name",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(stale(&dirs, runtime, &existing), ["ns_d_gone"]);
    }
}
