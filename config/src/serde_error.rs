//! Turning serde_yaml's errors into `ConfigError`s: take the position serde_yaml found, the
//! field path serde_path_to_error tracked, and rewrite serde's generic wording ("expected i32",
//! "unknown field `x`, expected one of …") into the precise, suggestion-bearing reason.

use serde_path_to_error::Segment;

use crate::error::{ConfigError, Location, Problem};

/// Closest Jaro-Winkler similarity at which a known field is offered as "did you mean".
const SUGGESTION_SIMILARITY: f64 = 0.85;

/// Serde's names for primitive types, and how the reason spells them instead.
const EXPECTED_NAMES: &[(&str, &str)] = &[
    ("expected i32", "expected an integer"),
    ("expected i64", "expected an integer"),
    ("expected u16", "expected an integer from 0 to 65535"),
    ("expected u32", "expected a non-negative integer"),
    ("expected f64", "expected a number"),
];

/// A YAML syntax error (from parsing the document into a `serde_yaml::Value`). serde_yaml
/// reports a repeated key at the start of its mapping, so `repeated` finds the repetition.
pub(crate) fn malformed(
    file: &str,
    error: &serde_yaml::Error,
    repeated: impl FnOnce(&str) -> Option<Location>,
) -> ConfigError {
    let message = error.to_string();
    let duplicate = message
        .strip_prefix("duplicate entry with key \"")
        .and_then(|rest| rest.split('"').next());
    let location = duplicate.and_then(repeated).or_else(|| position(error));
    ConfigError::invalid(
        file,
        location,
        Problem::MalformedYaml(strip_position(&message, position(error))),
    )
}

/// An error from deserializing a document into its typed struct `kind`.
pub(crate) fn typed(
    file: &str,
    kind: &str,
    error: serde_path_to_error::Error<serde_yaml::Error>,
) -> ConfigError {
    // A key that failed to deserialize shows as a trailing "?" segment: name its map instead.
    let mut segments: Vec<Segment> = error.path().iter().cloned().collect();
    while matches!(segments.last(), Some(Segment::Unknown)) {
        segments.pop();
    }
    let inner = error.into_inner();
    let location = position(&inner);
    let message = strip_path(&strip_position(&inner.to_string(), location), &segments);
    let problem =
        unknown_field(&message, &segments, kind).unwrap_or_else(|| Problem::InvalidValue {
            field: (!segments.is_empty()).then(|| render(&segments)),
            reason: reword(&message),
        });
    ConfigError::invalid(file, location, problem)
}

fn position(error: &serde_yaml::Error) -> Option<Location> {
    error.location().map(|at| Location {
        line: at.line(),
        column: at.column(),
    })
}

/// Drops the first " at line L column C" (the position is reported in front instead).
fn strip_position(message: &str, location: Option<Location>) -> String {
    match location {
        Some(at) => message.replacen(&format!(" at line {} column {}", at.line, at.column), "", 1),
        None => message.to_string(),
    }
}

/// Drops the "path: " prefix serde_yaml puts in front of its messages: its path is the field
/// path or one of its ancestors (for errors inside a map entry).
fn strip_path(message: &str, segments: &[Segment]) -> String {
    (1..=segments.len())
        .rev()
        .map(|len| render(&segments[..len]))
        .find_map(|prefix| {
            message
                .strip_prefix(&format!("{prefix}: "))
                .map(str::to_string)
        })
        .unwrap_or_else(|| message.to_string())
}

/// Renders path segments the way both serde_yaml and serde_path_to_error do (`a.b[0].c`).
fn render(segments: &[Segment]) -> String {
    let mut out = String::new();
    for segment in segments {
        if !out.is_empty() && !matches!(segment, Segment::Seq { .. }) {
            out.push('.');
        }
        out.push_str(&segment.to_string());
    }
    out
}

/// Recognizes serde's "unknown field `x`, expected …" and turns it into the problem with the
/// container named and a suggestion from the expected names.
fn unknown_field(message: &str, segments: &[Segment], kind: &str) -> Option<Problem> {
    let rest = message.strip_prefix("unknown field `")?;
    let (name, expected) = rest.split_once('`')?;
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    let parents = &segments[..segments.len().saturating_sub(1)];
    let container = if parents.is_empty() {
        kind.to_string()
    } else {
        render(parents)
    };
    Some(Problem::UnknownField {
        field: render(segments),
        name: name.to_string(),
        container,
        suggestion: suggest(name, &known),
    })
}

/// The known name most similar to `name`, when it is similar enough to be a likely typo.
/// Public so every strict parser of sergeant (configuration, static pod manifests) suggests
/// the same way.
#[must_use]
pub fn suggest(name: &str, known: &[&str]) -> Option<String> {
    let lowered = name.to_lowercase();
    known
        .iter()
        .map(|candidate| {
            let score = strsim::jaro_winkler(&lowered, &candidate.to_lowercase());
            (score, *candidate)
        })
        .filter(|(score, _)| *score >= SUGGESTION_SIMILARITY)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate.to_string())
}

/// serde's wording made readable: primitive type names spelled out, backticks made quotes.
/// Public so every parser of sergeant words serde's errors the same way.
#[must_use]
pub fn reword(message: &str) -> String {
    let spelled = EXPECTED_NAMES
        .iter()
        .fold(message.to_string(), |text, (serde_name, ours)| {
            text.replace(serde_name, ours)
        });
    spelled.replace('`', "\"")
}
