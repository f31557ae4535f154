//! Resource quantities as upstream's validation checks them: each one written in Kubernetes'
//! quantity grammar (parsed by the same [`Quantity`] the node uses later), not negative, within
//! the range a quantity can hold, whole where the resource is counted in units, and requests
//! no larger than limits; resource names standard or domain-qualified. This covers container
//! resources, the pod's own `resources` and `overhead`, and `emptyDir.sizeLimit`.
//! Entry points: `Checks::resources`, `Checks::pod_resources`, `Checks::volume_quantities`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{PodSpec, ResourceRequirements, Volume};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;
use sergeant_config::{ParseError, Quantity};

use super::Checks;
use crate::located::FieldPath;
use crate::names::{qualified_name_problem, quoted};

/// The names a container may request without a domain, besides `hugepages-<size>`.
const STANDARD: &[&str] = &["cpu", "memory", "ephemeral-storage"];
const HUGEPAGES: &str = "hugepages-";

/// What a resource's name says about the rules of its quantities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `cpu`, counted in millicores.
    Cpu,
    /// `memory` and `ephemeral-storage` (and names under a `kubernetes.io` domain).
    Plain,
    /// `hugepages-<size>`: whole pages.
    HugePages,
    /// A domain-qualified extended resource (`example.com/gpu`): whole units, and a request
    /// must equal its limit (extended resources are never overcommitted).
    Extended,
}

/// Why a resource name or quantity is refused: the reason of the manifest problem at its
/// field, in the words of upstream's validation where it has them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum ResourceProblem {
    /// The name is not a valid qualified name (the reason says why).
    #[error("{0}")]
    Name(String),
    /// An unqualified name that is not a standard resource.
    #[error(
        "{} is not a standard resource for containers: cpu, memory, ephemeral-storage, \
         hugepages-<size>, or a domain-qualified name",
        quoted(.0)
    )]
    NotStandard(String),
    /// The quantity does not parse.
    #[error("{0}")]
    Unparsable(ParseError),
    /// The quantity is negative.
    #[error("must be greater than or equal to 0")]
    Negative,
    /// The quantity is at or past the largest one upstream holds.
    #[error(
        "{} is too large: a quantity must be less than 2^63-1 (9223372036854775807)",
        quoted(.0)
    )]
    TooLarge(String),
    /// A cpu quantity too large to count in millicores.
    #[error(
        "{} is too large: cpu is counted in millicores, which must be less than 2^63-1",
        quoted(.0)
    )]
    CpuTooLarge(String),
    /// A fraction of a resource counted in whole units.
    #[error("{} must be a whole number", quoted(.0))]
    NotWhole(String),
}

/// The kind of the resource `name`, or why it is not one a container may request.
fn kind_of(name: &str) -> Result<Kind, ResourceProblem> {
    if let Some(reason) = qualified_name_problem(name) {
        return Err(ResourceProblem::Name(reason));
    }
    match name.split_once('/') {
        None if name == "cpu" => Ok(Kind::Cpu),
        None if STANDARD.contains(&name) => Ok(Kind::Plain),
        None => match name.strip_prefix(HUGEPAGES).map(str::parse::<Quantity>) {
            Some(Ok(size)) if size.value() > 0 => Ok(Kind::HugePages),
            _ => Err(ResourceProblem::NotStandard(name.to_owned())),
        },
        Some((domain, _)) if domain == "kubernetes.io" || domain.ends_with(".kubernetes.io") => {
            Ok(Kind::Plain)
        }
        Some(_) => Ok(Kind::Extended),
    }
}

/// Why `quantity` is not a usable amount of a resource of kind `kind`; its parsed value when
/// it is.
fn amount(quantity: &ApiQuantity, kind: Kind) -> Result<Quantity, ResourceProblem> {
    let parsed: Quantity = quantity.0.parse().map_err(ResourceProblem::Unparsable)?;
    if parsed.is_negative() {
        return Err(ResourceProblem::Negative);
    }
    // `value` saturates at the largest i64: reaching it means the quantity is at or past the
    // largest value upstream's quantities hold (2^63-1, to which upstream silently cuts).
    if parsed.value() == i64::MAX {
        return Err(ResourceProblem::TooLarge(quantity.0.clone()));
    }
    if kind == Kind::Cpu && parsed.milli_value() == i64::MAX {
        return Err(ResourceProblem::CpuTooLarge(quantity.0.clone()));
    }
    if matches!(kind, Kind::HugePages | Kind::Extended) && parsed.milli_value() % 1000 != 0 {
        return Err(ResourceProblem::NotWhole(quantity.0.clone()));
    }
    Ok(parsed)
}

/// An order on quantities that never puts a smaller one after a larger one: whole units
/// first, then thousandths (both rounded up, as the node reads them).
fn order(quantity: &Quantity) -> (i64, i64) {
    (quantity.value(), quantity.milli_value())
}

impl Checks<'_, '_> {
    /// A container's requests and limits.
    pub(super) fn resources(&mut self, resources: &ResourceRequirements, path: &FieldPath) {
        let limits = self.quantities(resources.limits.as_ref(), &path.key("limits"));
        let requests = self.quantities(resources.requests.as_ref(), &path.key("requests"));
        for (name, (kind, request)) in &requests {
            let request_path = path.key("requests").key(name);
            let text = |q: &Quantity| q.as_str().to_owned();
            match (limits.get(name), kind) {
                (Some((_, limit)), Kind::Extended) if order(request) != order(limit) => {
                    self.fail(
                        &request_path,
                        format!("must be equal to the {name} limit of {}", text(limit)),
                    );
                }
                (Some((_, limit)), _) if order(request) > order(limit) => {
                    self.fail(
                        &request_path,
                        format!(
                            "must be less than or equal to the {name} limit of {}",
                            text(limit)
                        ),
                    );
                }
                (None, Kind::Extended) => self.fail(
                    &request_path,
                    "needs a limit as well: extended resources cannot be overcommitted",
                ),
                _ => {}
            }
        }
    }

    /// The pod's own resources and its overhead.
    pub(super) fn pod_resources(&mut self, spec: &PodSpec) {
        let spec_path = FieldPath::of(&["spec"]);
        if let Some(resources) = &spec.resources {
            self.resources(resources, &spec_path.key("resources"));
        }
        self.quantities(spec.overhead.as_ref(), &spec_path.key("overhead"));
    }

    /// The quantities a volume carries (`emptyDir.sizeLimit`).
    pub(super) fn volume_quantities(&mut self, volume: &Volume, path: &FieldPath) {
        let size_limit = volume
            .empty_dir
            .as_ref()
            .and_then(|e| e.size_limit.as_ref());
        if let Some(limit) = size_limit {
            if let Err(problem) = amount(limit, Kind::Plain) {
                self.fail(&path.key("emptyDir").key("sizeLimit"), problem.to_string());
            }
        }
    }

    /// Checks each resource of `map` (at `path`), returning the usable ones by name.
    fn quantities<'r>(
        &mut self,
        map: Option<&'r BTreeMap<String, ApiQuantity>>,
        path: &FieldPath,
    ) -> BTreeMap<&'r str, (Kind, Quantity)> {
        let mut usable = BTreeMap::new();
        for (name, quantity) in map.into_iter().flatten() {
            let checked = kind_of(name).and_then(|kind| Ok((kind, amount(quantity, kind)?)));
            match checked {
                Ok(found) => {
                    usable.insert(name.as_str(), found);
                }
                Err(problem) => self.fail(&path.key(name), problem.to_string()),
            }
        }
        usable
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::random_strings;
    use crate::validate::tests::problems;

    fn container(resources: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: a\n    image: busybox\n    resources:\n{resources}"
        )
    }

    fn limit(name: &str, value: &str) -> Vec<(usize, String, String)> {
        problems(&container(&format!(
            "      limits:\n        {name}: \"{value}\"\n"
        )))
    }

    #[test]
    fn good_quantities_pass() {
        for value in [
            "1e3", "0.5", "100m", "0", "64Mi", "1.5G", "+1", "5.", ".5", "1E3",
        ] {
            assert!(
                limit("cpu", value).is_empty(),
                "{value}: {:?}",
                limit("cpu", value)
            );
        }
        assert!(limit("memory", "7Ei").is_empty());
        assert!(limit("memory", "9223372036854775806").is_empty());
        assert!(limit("example.com/gpu", "2").is_empty());
        assert!(limit("hugepages-2Mi", "64Mi").is_empty());
    }

    #[test]
    fn bad_quantities_are_refused_naming_the_field() {
        let reason = |name: &str, value: &str| {
            let found = limit(name, value);
            assert_eq!(found.len(), 1, "{value}: {found:?}");
            assert_eq!(found[0].0, 11, "{found:?}");
            assert_eq!(
                found[0].1,
                format!("spec.containers[0].resources.limits.{name}")
            );
            found[0].2.clone()
        };
        assert_eq!(reason("cpu", "-1"), "must be greater than or equal to 0");
        assert_eq!(
            reason("memory", "-5Mi"),
            "must be greater than or equal to 0"
        );
        assert!(reason("cpu", "lots").contains("is not a quantity"));
        assert!(reason("cpu", "").contains("is not a quantity"));
        assert!(reason("cpu", "1..5").contains("is not a quantity"));
        assert!(reason("memory", "1 Gi").contains("is not a quantity"));
        assert!(reason("memory", "9999999999999999Ei").contains("too large"));
        assert!(reason("memory", "9223372036854775807").contains("too large"));
        assert!(reason("cpu", "9223372036854776").contains("millicores"));
        assert!(reason("example.com/gpu", "0.5").contains("whole number"));
        assert!(reason("hugepages-2Mi", "1.5").contains("whole number"));
        assert!(reason("gpu", "1").contains("not a standard resource"));
        assert!(reason("hugepages-big", "1").contains("not a standard resource"));
    }

    #[test]
    fn requests_may_not_pass_limits() {
        let text = container(
            "      requests:\n        cpu: 500m\n        memory: 2Gi\n        example.com/gpu: 1\n      limits:\n        cpu: \"0.5\"\n        memory: 1Gi\n        example.com/gpu: 2\n",
        );
        let found = problems(&text);
        let fields: Vec<&str> = found.iter().map(|p| p.1.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.containers[0].resources.requests.memory",
                "spec.containers[0].resources.requests.example.com/gpu",
            ],
            "{found:?}"
        );
        assert_eq!(
            found[0].2,
            "must be less than or equal to the memory limit of 1Gi"
        );
        assert_eq!(
            found[1].2,
            "must be equal to the example.com/gpu limit of 2"
        );
    }

    #[test]
    fn pod_level_quantities_are_checked_too() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  overhead:\n    cpu: -1\n  containers:\n  - name: a\n    image: busybox\n  volumes:\n  - name: v\n    emptyDir:\n      sizeLimit: lots\n";
        let found = problems(text);
        let fields: Vec<(usize, &str)> = found.iter().map(|p| (p.0, p.1.as_str())).collect();
        assert_eq!(
            fields,
            [
                (7, "spec.overhead.cpu"),
                (14, "spec.volumes[0].emptyDir.sizeLimit")
            ],
            "{found:?}"
        );
    }

    /// Kubernetes' quantity grammar read plainly: a sign, digits with at most one point, and a
    /// suffix (one of the alphabet's SI suffixes, or `e`/`E` with a signed whole exponent).
    fn grammatical(text: &str) -> bool {
        let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
        let end = unsigned
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(unsigned.len());
        let (number, suffix) = unsigned.split_at(end);
        let number_ok =
            number.matches('.').count() <= 1 && number.contains(|c: char| c.is_ascii_digit());
        let exponent = suffix
            .strip_prefix(['e', 'E'])
            .map(|e| e.strip_prefix(['+', '-']).unwrap_or(e))
            .is_some_and(|digits| !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()));
        number_ok && (["", "m", "k", "Mi", "Ki", "E"].contains(&suffix) || exponent)
    }

    /// On random strings over the characters that matter, the checks never panic and agree
    /// with the grammar: what it refuses is refused; what it accepts is refused only when
    /// negative or too large.
    #[test]
    fn random_quantities_follow_the_grammar() {
        let alphabet: &[&str] = &[
            "1", "0", "9", ".", "-", "+", "e", "E", "m", "Mi", "Ki", "k", "x", " ",
        ];
        for text in random_strings(alphabet, 8, 20_000, 0x9e37_79b9_7f4a_7c15) {
            let result = amount(&ApiQuantity(text.clone()), Kind::Cpu);
            if !grammatical(&text) {
                assert!(result.is_err(), "{text:?} accepted");
                continue;
            }
            if let Err(reason) = result {
                let negative = text.starts_with('-')
                    && text.parse::<Quantity>().is_ok_and(|q| q.is_negative());
                assert!(
                    negative || reason.to_string().contains("too large"),
                    "{text:?} refused: {reason}"
                );
            }
        }
    }
}
