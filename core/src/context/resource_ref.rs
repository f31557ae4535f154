//! `resourceFieldRef`: a container's cpu, memory or ephemeral-storage request or limit as text,
//! divided by the `divisor` and rounded up; a limit that is not set reads as the node's
//! capacity, as upstream. A divisor left unset reaches the node as `"0"` (the API server writes
//! the zero quantity), and a zero divisor means 1, as upstream reads it.

use k8s_openapi::api::core::v1::{Pod, ResourceFieldSelector};
use sergeant_config::{ParseError, Quantity};

use super::node::NodeContext;

/// Why a `resourceFieldRef` (of an env variable or a downward API file) has no value: it names
/// no container of the pod or no resource the node answers for, or a quantity that does not
/// parse. Its text follows the field in the pod's `CreateContainerConfigError` or
/// `FailedMount` message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResourceRefError {
    /// The container the selector names is not in the pod.
    #[error("the pod has no container named {0:?}")]
    NoContainer(String),
    /// The resource is not written `limits.<resource>` or `requests.<resource>`.
    #[error("{0:?} is not limits.<resource> or requests.<resource>")]
    NotLimitsOrRequests(String),
    /// A quantity (the divisor, the request or the limit) does not parse.
    #[error("{text:?}: {reason}")]
    Quantity {
        /// The quantity as written.
        text: String,
        /// Why it does not parse.
        reason: ParseError,
    },
    /// A resource other than cpu, memory and ephemeral-storage.
    #[error("resource {0:?} is not supported (cpu, memory, ephemeral-storage)")]
    Unsupported(String),
    /// The divisor is negative (in the resource's unit).
    #[error("the divisor {0} is not above zero")]
    Divisor(i64),
}

/// The value `selector` names, for the container `own` (used when the selector names no
/// container).
///
/// # Errors
/// [`ResourceRefError`] when the selector cannot be answered.
pub fn resource_value(
    pod: &Pod,
    own: &str,
    selector: &ResourceFieldSelector,
    node: &NodeContext,
) -> Result<String, ResourceRefError> {
    let name = selector
        .container_name
        .as_deref()
        .filter(|n| !n.is_empty())
        .unwrap_or(own);
    let container = pod
        .spec
        .iter()
        .flat_map(|s| {
            s.containers
                .iter()
                .chain(s.init_containers.iter().flatten())
        })
        .find(|c| c.name == name)
        .ok_or_else(|| ResourceRefError::NoContainer(name.to_owned()))?;
    let (kind, resource) = selector
        .resource
        .split_once('.')
        .filter(|(kind, _)| matches!(*kind, "limits" | "requests"))
        .ok_or_else(|| ResourceRefError::NotLimitsOrRequests(selector.resource.clone()))?;
    let resources = container.resources.as_ref();
    let map = match kind {
        "limits" => resources.and_then(|r| r.limits.as_ref()),
        _ => resources.and_then(|r| r.requests.as_ref()),
    };
    let parse = |text: &str| -> Result<Quantity, ResourceRefError> {
        text.parse().map_err(|reason| ResourceRefError::Quantity {
            text: text.to_owned(),
            reason,
        })
    };
    let divisor = match selector.divisor.as_ref().map(|d| parse(&d.0)).transpose()? {
        Some(divisor) if !divisor.is_zero() => divisor,
        _ => parse("1")?,
    };
    let set = map
        .and_then(|m| m.get(resource))
        .map(|q| parse(&q.0))
        .transpose()?;
    let (amount, divisor) = match resource {
        "cpu" => {
            let milli = set.map_or(
                if kind == "limits" {
                    node.cpu_capacity_millis()
                } else {
                    0
                },
                |q| q.milli_value(),
            );
            (milli, divisor.milli_value())
        }
        "memory" | "ephemeral-storage" => {
            let capacity = if resource == "memory" {
                i64::try_from(node.memory_capacity_bytes).unwrap_or(i64::MAX)
            } else {
                0
            };
            let bytes = set.map_or(if kind == "limits" { capacity } else { 0 }, |q| q.value());
            (bytes, divisor.value())
        }
        other => return Err(ResourceRefError::Unsupported(other.to_owned())),
    };
    let divisor = u64::try_from(divisor)
        .ok()
        .filter(|d| *d > 0)
        .ok_or(ResourceRefError::Divisor(divisor))?;
    let amount = u64::try_from(amount).unwrap_or(0);
    Ok(amount.div_ceil(divisor).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{node, pod_with, resources};
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;
    use std::path::PathBuf;

    fn value(
        resource: &str,
        divisor: Option<&str>,
        container: Option<&str>,
    ) -> Result<String, ResourceRefError> {
        let pod = pod_with(
            vec![
                resources("app", &[("cpu", "250m")], &[("memory", "64Mi")]),
                resources("side", &[], &[("cpu", "1500m")]),
            ],
            vec![],
        );
        let selector = ResourceFieldSelector {
            container_name: container.map(Into::into),
            divisor: divisor.map(|d| ApiQuantity(d.into())),
            resource: resource.into(),
        };
        resource_value(&pod, "app", &selector, &node(PathBuf::from("/r")))
    }

    #[test]
    fn requests_limits_and_node_capacity() {
        assert_eq!(value("requests.cpu", None, None), Ok("1".into()));
        assert_eq!(value("requests.cpu", Some("1m"), None), Ok("250".into()));
        assert_eq!(value("limits.memory", Some("1Mi"), None), Ok("64".into()));
        assert_eq!(
            value("limits.memory", None, None),
            Ok((64 << 20).to_string())
        );
        assert_eq!(value("limits.cpu", None, Some("side")), Ok("2".into()));
        // No cpu limit: the node's 4 cpus.
        assert_eq!(value("limits.cpu", None, None), Ok("4".into()));
        assert_eq!(value("requests.memory", None, Some("side")), Ok("0".into()));
        assert_eq!(
            value("limits.gpu", None, None),
            Err(ResourceRefError::Unsupported("gpu".into()))
        );
        assert!(value("limits.gpu", None, None)
            .unwrap_err()
            .to_string()
            .contains("not supported"));
        assert!(value("cpu", None, None)
            .unwrap_err()
            .to_string()
            .contains("limits.<resource>"));
        assert_eq!(
            value("limits.cpu", None, Some("nope")),
            Err(ResourceRefError::NoContainer("nope".into()))
        );
        // The API server's "0" for an unset divisor, and any zero, read as 1.
        assert_eq!(value("requests.cpu", Some("0"), None), Ok("1".into()));
        assert_eq!(
            value("limits.memory", Some("0"), None),
            Ok((64 << 20).to_string())
        );
        assert_eq!(
            value("limits.cpu", Some("0m"), Some("side")),
            Ok("2".into())
        );
        assert_eq!(
            value("limits.cpu", Some("-1"), None),
            Err(ResourceRefError::Divisor(-1000))
        );
        let unparsable = value("limits.cpu", Some("x"), None).unwrap_err();
        assert!(
            matches!(unparsable, ResourceRefError::Quantity { ref text, .. } if text == "x"),
            "{unparsable:?}"
        );
        assert!(unparsable.to_string().contains("not a quantity"));
    }
}
