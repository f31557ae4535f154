//! The cpu and memory amounts of one container, read from its `resources` with the config
//! crate's quantity parser.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Container;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;
use sergeant_config::Quantity;

use crate::context::SpecError;

/// Millicores of cpu and bytes of memory, each present only when set and above zero.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Amounts {
    pub cpu_milli: Option<i64>,
    pub memory_bytes: Option<i64>,
}

/// A container's requests and limits. As the API server's defaulting does, a resource with a
/// limit and no request is requested at its limit, so pods read from manifests behave like
/// pods read from the API server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContainerAmounts {
    pub requests: Amounts,
    pub limits: Amounts,
}

/// Reads the cpu and memory requests and limits of `container`; `field` is the container's
/// path (`spec.containers[0]`) for errors.
pub fn container_amounts(
    pod: &str,
    field: &str,
    container: &Container,
) -> Result<ContainerAmounts, SpecError> {
    let resources = container.resources.as_ref();
    let read = |kind: &str, map: Option<&BTreeMap<String, ApiQuantity>>| {
        let amount = |name: &str, milli: bool| -> Result<Option<i64>, SpecError> {
            let Some(quantity) = map.and_then(|m| m.get(name)) else {
                return Ok(None);
            };
            let parsed: Quantity = quantity.0.parse().map_err(|e| {
                SpecError::field(
                    pod,
                    format!("{field}.resources.{kind}.{name}"),
                    format!("{e}"),
                )
            })?;
            let value = if milli {
                parsed.milli_value()
            } else {
                parsed.value()
            };
            Ok((value > 0).then_some(value))
        };
        Ok::<_, SpecError>(Amounts {
            cpu_milli: amount("cpu", true)?,
            memory_bytes: amount("memory", false)?,
        })
    };
    let limits = read("limits", resources.and_then(|r| r.limits.as_ref()))?;
    let explicit = read("requests", resources.and_then(|r| r.requests.as_ref()))?;
    let requests = Amounts {
        cpu_milli: explicit.cpu_milli.or(limits.cpu_milli),
        memory_bytes: explicit.memory_bytes.or(limits.memory_bytes),
    };
    Ok(ContainerAmounts { requests, limits })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ResourceRequirements;

    fn container(requests: &[(&str, &str)], limits: &[(&str, &str)]) -> Container {
        let map = |pairs: &[(&str, &str)]| {
            Some(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), ApiQuantity(v.to_string())))
                    .collect(),
            )
        };
        Container {
            name: "c".into(),
            resources: Some(ResourceRequirements {
                requests: map(requests),
                limits: map(limits),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn cpu_and_memory_are_parsed_in_kubernetes_units() {
        let c = container(
            &[("cpu", "0.5"), ("memory", "1e9")],
            &[("cpu", "1"), ("memory", "64Mi")],
        );
        let amounts = container_amounts("ns/p", "spec.containers[0]", &c).unwrap();
        assert_eq!(amounts.requests.cpu_milli, Some(500));
        assert_eq!(amounts.requests.memory_bytes, Some(1_000_000_000));
        assert_eq!(amounts.limits.cpu_milli, Some(1000));
        assert_eq!(amounts.limits.memory_bytes, Some(64 << 20));
    }

    #[test]
    fn a_missing_request_defaults_to_the_limit_and_zero_is_absent() {
        let c = container(&[("cpu", "0")], &[("cpu", "250m"), ("memory", "1G")]);
        let amounts = container_amounts("ns/p", "spec.containers[0]", &c).unwrap();
        assert_eq!(amounts.requests.cpu_milli, Some(250));
        assert_eq!(amounts.requests.memory_bytes, Some(1_000_000_000));
        assert_eq!(
            container_amounts("ns/p", "x", &Container::default()).unwrap(),
            ContainerAmounts::default()
        );
    }

    #[test]
    fn a_bad_quantity_names_its_field() {
        let c = container(&[], &[("memory", "lots")]);
        let error = container_amounts("ns/p", "spec.containers[1]", &c).unwrap_err();
        let text = error.to_string();
        assert!(
            text.starts_with("pod ns/p: spec.containers[1].resources.limits.memory: "),
            "{text}"
        );
    }
}
