//! Reading the file's YAML documents: split them, tell them apart by `kind`, deserialize each
//! into its typed struct, and run the checks, turning every failure into a `ConfigError` that
//! points at the right line of the whole file.

use serde::de::DeserializeOwned;
use serde_yaml::Value;

use crate::error::{ConfigError, Location, Problem};
use crate::kubelet::{KubeletConfiguration, KUBELET_API_VERSION, KUBELET_KIND};
use crate::locate::{
    document_start, document_text, key_lines, locate, locate_repeated, split_documents, Span,
};
use crate::serde_error;
use crate::sergeant::{SergeantConfiguration, SERGEANT_API_VERSION, SERGEANT_KIND};
use crate::support;
use crate::validate::{self, Violation};
use crate::warning::ConfigWarning;
use crate::warning::Notice;

/// The document kinds a configuration file may hold, with the apiVersion each requires.
const KINDS: [(&str, &str); 2] = [
    (KUBELET_KIND, KUBELET_API_VERSION),
    (SERGEANT_KIND, SERGEANT_API_VERSION),
];

/// The two documents of a configuration file, parsed and checked.
pub(crate) struct Documents {
    pub(crate) kubelet: KubeletConfiguration,
    pub(crate) sergeant: SergeantConfiguration,
    /// Settings accepted without the effect upstream gives them.
    pub(crate) warnings: Vec<ConfigWarning>,
}

/// One parsed document and where it sits in the file.
struct Parsed<T> {
    value: T,
    span: Span,
}

/// Parses and checks every document of `text`; `file` names the source in errors.
pub(crate) fn parse(text: &str, file: &str) -> Result<Documents, ConfigError> {
    let source = Source { text, file };
    let mut kubelet: Option<Parsed<KubeletConfiguration>> = None;
    let mut notices = Vec::new();
    let mut sergeant: Option<Parsed<SergeantConfiguration>> = None;
    for span in split_documents(text) {
        let document = document_text(text, span);
        let value: Value = serde_yaml::from_str(&document).map_err(|e| {
            serde_error::malformed(file, &e, |key| locate_repeated(text, span, key))
        })?;
        if value.is_null() {
            continue;
        }
        let kind = source.kind_of(&value, span)?;
        if kind == KUBELET_KIND {
            source.first_of_kind(&kubelet, span, kind)?;
            let (untyped, screened) =
                support::screen(&value).map_err(|v| source.violation(&[span], &v))?;
            notices = screened;
            let document = without_keys(text, span, document, &untyped);
            kubelet = Some(source.typed(&document, span, kind)?);
        } else {
            source.first_of_kind(&sergeant, span, kind)?;
            sergeant = Some(source.typed(&document, span, kind)?);
        }
    }
    let Some(kubelet) = kubelet else {
        return Err(source.error(
            None,
            None,
            format!(
                "no {KUBELET_KIND} document (one with apiVersion: {KUBELET_API_VERSION} and kind: {KUBELET_KIND} is required)"
            ),
        ));
    };
    validate::kubelet(&kubelet.value).map_err(|v| source.violation(&[kubelet.span], &v))?;
    notices.extend(
        support::kubelet(&kubelet.value).map_err(|v| source.violation(&[kubelet.span], &v))?,
    );
    let warnings = notices
        .into_iter()
        .map(|notice| source.warning(kubelet.span, notice))
        .collect();
    let sergeant = sergeant.unwrap_or_else(|| Parsed {
        value: SergeantConfiguration::default(),
        span: Span { start: 0, end: 0 },
    });
    validate::sergeant(&sergeant.value, &kubelet.value)
        .map_err(|v| source.violation(&[sergeant.span, kubelet.span], &v))?;
    Ok(Documents {
        kubelet: kubelet.value,
        sergeant: sergeant.value,
        warnings,
    })
}

/// The document's text with the lines of each key path in `paths` (and their values) blanked,
/// so the typed parse does not see them and every other line keeps its number.
fn without_keys(text: &str, span: Span, document: String, paths: &[&str]) -> String {
    if paths.is_empty() {
        return document;
    }
    let mut lines: Vec<&str> = document.lines().collect();
    for path in paths {
        let segments: Vec<&str> = path.split('.').collect();
        if let Some((start, end)) = key_lines(text, span, &segments) {
            for line in lines.iter_mut().take(end).skip(start) {
                *line = "";
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// The text being parsed and its name, for building errors.
struct Source<'a> {
    text: &'a str,
    file: &'a str,
}

impl Source<'_> {
    fn error(
        &self,
        location: Option<Location>,
        field: Option<&str>,
        reason: String,
    ) -> ConfigError {
        ConfigError::invalid(
            self.file,
            location,
            Problem::InvalidValue {
                field: field.map(str::to_string),
                reason,
            },
        )
    }

    /// The document's kind, checked to be known and to come with its apiVersion.
    fn kind_of(&self, value: &Value, span: Span) -> Result<&'static str, ConfigError> {
        let at = |key: &str| locate(self.text, span, &[key]).or(document_start(self.text, span));
        if !value.is_mapping() {
            return Err(self.error(
                document_start(self.text, span),
                None,
                "a configuration document must be a mapping with apiVersion and kind".to_string(),
            ));
        }
        let field = |key: &str| value.get(key).and_then(Value::as_str);
        let Some(kind) = field("kind") else {
            return Err(self.error(
                at("kind"),
                Some("kind"),
                format!("missing or not a string (expected {KUBELET_KIND} or {SERGEANT_KIND})"),
            ));
        };
        let Some((known, api_version)) = KINDS.iter().find(|(name, _)| *name == kind) else {
            return Err(self.error(
                at("kind"),
                Some("kind"),
                format!(
                    "unknown document kind \"{kind}\" (expected {KUBELET_KIND} or {SERGEANT_KIND})"
                ),
            ));
        };
        match field("apiVersion") {
            Some(found) if found == *api_version => Ok(known),
            found => Err(self.error(
                at("apiVersion"),
                Some("apiVersion"),
                format!(
                    "{} is not supported for kind {known} (expected \"{api_version}\")",
                    found.map_or("a missing apiVersion".to_string(), |v| format!("\"{v}\""))
                ),
            )),
        }
    }

    /// Refuses a second document of a kind already seen.
    fn first_of_kind<T>(
        &self,
        earlier: &Option<Parsed<T>>,
        span: Span,
        kind: &str,
    ) -> Result<(), ConfigError> {
        match earlier {
            Some(first) => Err(self.error(
                locate(self.text, span, &["kind"]),
                Some("kind"),
                format!(
                    "a second {kind} document (the first starts at line {})",
                    document_start(self.text, first.span).map_or(1, |at| at.line)
                ),
            )),
            None => Ok(()),
        }
    }

    fn typed<T: DeserializeOwned>(
        &self,
        document: &str,
        span: Span,
        kind: &str,
    ) -> Result<Parsed<T>, ConfigError> {
        let deserializer = serde_yaml::Deserializer::from_str(document);
        serde_path_to_error::deserialize(deserializer)
            .map(|value| Parsed { value, span })
            .map_err(|e| serde_error::typed(self.file, kind, e))
    }

    /// A notice about the KubeletConfiguration document, with the line of its key when the
    /// key is written there.
    fn warning(&self, span: Span, notice: Notice) -> ConfigWarning {
        let path: Vec<&str> = notice.field.split('.').collect();
        ConfigWarning {
            file: self.file.to_owned(),
            line: locate(self.text, span, &path).map(|at| at.line),
            field: notice.field,
            reason: notice.reason,
        }
    }

    /// A failed check, pointed at its key in the first span; failing that, at its related key
    /// in any of the spans (the check's own document first).
    fn violation(&self, spans: &[Span], violation: &Violation) -> ConfigError {
        let path: Vec<&str> = violation.path.iter().map(String::as_str).collect();
        let related: Vec<&str> = violation
            .related
            .map_or(Vec::new(), |key| key.split('.').collect());
        let exact = spans
            .first()
            .and_then(|span| locate(self.text, *span, &path));
        let location = exact.or_else(|| {
            spans.iter().find_map(|span| {
                (!related.is_empty())
                    .then(|| locate(self.text, *span, &related))
                    .flatten()
            })
        });
        self.error(location, Some(&violation.field()), violation.reason.clone())
    }
}
