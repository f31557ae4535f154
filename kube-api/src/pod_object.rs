//! One object of the API server's pod watch becomes a pod for the pod manager: decoded on its
//! own (so one object the agent cannot read never hides the others), checked like a static pod,
//! and marked with the `api` config source as upstream marks it. Pods keep their own UIDs.

use std::collections::BTreeMap;

use kube::api::DynamicObject;
use sergeant_messages::pods::core::Pod;

use sergeant_core::manifest::join_problems;
use sergeant_core::source::{API_SOURCE, CONFIG_MIRROR, CONFIG_SOURCE};
use sergeant_core::validate::api_pod_problems;

/// Why an API object cannot be run on this node, as one line naming the field and reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiPodError {
    /// The object is not a v1 Pod this agent can read.
    #[error("{field}: {reason}")]
    Decode {
        /// The field path that did not decode (`spec.containers[0].ports`).
        field: String,
        /// What was wrong with it.
        reason: String,
    },
    /// The pod decoded but fails the checks every pod on the node passes.
    #[error("{}", join_problems(.problems))]
    Invalid {
        /// Each problem as `field: reason`.
        problems: Vec<String>,
    },
}

/// The object's name as the source reports it: `namespace/name (uid)`.
#[must_use]
pub fn origin_of(object: &DynamicObject) -> String {
    format!(
        "pods/{}/{} (uid {})",
        object.metadata.namespace.as_deref().unwrap_or("default"),
        object.metadata.name.as_deref().unwrap_or_default(),
        object.metadata.uid.as_deref().unwrap_or_default()
    )
}

/// Decodes and checks one watched object: the pod to run, or `None` for a mirror pod (the
/// API's reflection of a static pod, which runs from its manifest, not from here).
///
/// # Errors
/// [`ApiPodError`] naming the field and the reason.
pub fn convert(object: &DynamicObject) -> Result<Option<Pod>, ApiPodError> {
    let annotations = object.metadata.annotations.as_ref();
    if annotations.is_some_and(|a| a.contains_key(CONFIG_MIRROR)) {
        return Ok(None);
    }
    let value = serde_json::to_value(object).map_err(|e| ApiPodError::Decode {
        field: "(object)".to_owned(),
        reason: e.to_string(),
    })?;
    let mut pod: Pod =
        serde_path_to_error::deserialize(value).map_err(|e| ApiPodError::Decode {
            field: e.path().to_string(),
            reason: e.inner().to_string(),
        })?;
    let problems = api_pod_problems(&pod);
    if !problems.is_empty() {
        return Err(ApiPodError::Invalid { problems });
    }
    pod.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(CONFIG_SOURCE.to_owned(), API_SOURCE.to_owned());
    Ok(Some(pod))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sergeant_core::source::is_api_pod;

    fn object(spec: serde_json::Value) -> DynamicObject {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web", "namespace": "team", "uid": "u-1"},
            "spec": spec,
        }))
        .unwrap()
    }

    #[test]
    fn a_good_pod_keeps_its_uid_and_is_marked_api() {
        let good = object(serde_json::json!({"containers": [{"name": "c", "image": "busybox"}]}));
        let Ok(Some(pod)) = convert(&good) else {
            panic!("not converted");
        };
        assert_eq!(pod.metadata.uid.as_deref(), Some("u-1"));
        assert_eq!(pod.metadata.name.as_deref(), Some("web"));
        assert!(is_api_pod(&pod));
        assert_eq!(origin_of(&good), "pods/team/web (uid u-1)");
    }

    #[test]
    fn a_field_of_the_wrong_type_is_named() {
        let bad = object(
            serde_json::json!({"containers": [{"name": "c", "image": "busybox", "ports": "80"}]}),
        );
        let error = convert(&bad).unwrap_err();
        assert!(
            error.to_string().starts_with("spec.containers[0].ports: "),
            "{error}"
        );
    }

    #[test]
    fn failed_checks_are_all_listed() {
        let bad = object(serde_json::json!({"containers": [
            {"name": "c", "image": ""},
            {"name": "c", "image": "busybox"},
        ]}));
        assert_eq!(
            convert(&bad).unwrap_err().to_string(),
            "spec.containers[0].image: required: a container needs an image; \
             spec.containers[1].name: duplicate container name \"c\" (first at spec.containers[0].name)"
        );
    }

    /// The API server validated its pods already, but a pod it should not have stored (or a
    /// bad answer) must not reach the runtime: sizes, counts and quantities are checked here
    /// too, and the refusal names each problem.
    #[test]
    fn hostile_api_pods_are_refused_with_their_reasons() {
        let labels: serde_json::Map<String, serde_json::Value> = (0..100_000)
            .map(|n| (format!("k{n}"), serde_json::Value::from("v")))
            .collect();
        let mut bad = object(serde_json::json!({"containers": [{
            "name": "c",
            "image": "busybox",
            "resources": {"limits": {"cpu": "-1", "memory": "9999999999999999Ei"}},
            "volumeMounts": [{"name": "v", "mountPath": "/v", "subPath": "../../etc"}],
        }], "volumes": [{"name": "v", "emptyDir": {}}]}));
        bad.metadata.labels = serde_json::from_value(serde_json::Value::Object(labels)).ok();
        let started = std::time::Instant::now();
        let error = convert(&bad).unwrap_err().to_string();
        // A correctness bound, not a benchmark: a cost that grew with the square of the label
        // count would take minutes here; a linear one takes well under a second (debug build,
        // idle machine), so 30 s holds on a loaded one.
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
        assert_eq!(
            error,
            "metadata.labels: 100000 labels, more than the 1024 sergeant accepts; \
             spec.containers[0].resources.limits.cpu: must be greater than or equal to 0; \
             spec.containers[0].resources.limits.memory: \"9999999999999999Ei\" is not a \
             quantity: it is too large; \
             spec.containers[0].volumeMounts[0].subPath: must not contain '..'"
        );
    }

    #[test]
    fn mirror_pods_are_not_run() {
        let mut mirror = object(serde_json::json!({"containers": []}));
        mirror.metadata.annotations = Some([(CONFIG_MIRROR.to_owned(), "x".to_owned())].into());
        assert_eq!(convert(&mirror), Ok(None));
    }
}
