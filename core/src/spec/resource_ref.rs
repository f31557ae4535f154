//! `resourceFieldRef`: a container's cpu, memory or ephemeral-storage request or limit as text,
//! divided by the `divisor` and rounded up; a limit that is not set reads as the node's
//! capacity, as upstream. A divisor left unset reaches the node as `"0"` (the API server writes
//! the zero quantity), and a zero divisor means 1, as upstream reads it.

use k8s_openapi::api::core::v1::{Pod, ResourceFieldSelector};
use sergeant_config::Quantity;

use super::node::NodeContext;

/// The value `selector` names, for the container `own` (used when the selector names no
/// container). The error is a reason.
pub fn resource_value(
    pod: &Pod,
    own: &str,
    selector: &ResourceFieldSelector,
    node: &NodeContext,
) -> Result<String, String> {
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
        .ok_or_else(|| format!("the pod has no container named {name:?}"))?;
    let (kind, resource) = selector
        .resource
        .split_once('.')
        .filter(|(kind, _)| matches!(*kind, "limits" | "requests"))
        .ok_or_else(|| {
            format!(
                "{:?} is not limits.<resource> or requests.<resource>",
                selector.resource
            )
        })?;
    let resources = container.resources.as_ref();
    let map = match kind {
        "limits" => resources.and_then(|r| r.limits.as_ref()),
        _ => resources.and_then(|r| r.requests.as_ref()),
    };
    let parse = |text: &str| -> Result<Quantity, String> {
        text.parse().map_err(|e| format!("{text:?}: {e}"))
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
                    node.cpu_capacity_millis
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
        other => {
            return Err(format!(
                "resource {other:?} is not supported (cpu, memory, ephemeral-storage)"
            ))
        }
    };
    let divisor = u64::try_from(divisor)
        .ok()
        .filter(|d| *d > 0)
        .ok_or_else(|| format!("the divisor {divisor} is not above zero"))?;
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
    ) -> Result<String, String> {
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
        assert!(value("limits.gpu", None, None)
            .unwrap_err()
            .contains("not supported"));
        assert!(value("cpu", None, None)
            .unwrap_err()
            .contains("limits.<resource>"));
        assert!(value("limits.cpu", None, Some("nope"))
            .unwrap_err()
            .contains("no container"));
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
        assert!(value("limits.cpu", Some("-1"), None)
            .unwrap_err()
            .contains("divisor"));
        assert!(value("limits.cpu", Some("x"), None)
            .unwrap_err()
            .contains("not a quantity"));
    }
}
