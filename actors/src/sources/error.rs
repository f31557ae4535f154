//! How a manifest problem is reported: [`ManifestError`], one line naming the file, the line,
//! the field path and the reason, and [`Rejection`], the one or more problems that kept a
//! manifest from becoming a pod. [`Manifest`] ties a file's name to its text so every check
//! can point at the line it complains about.

use std::fmt;

/// One step of a field path: a key of a mapping or an index into a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    Key(String),
    Index(usize),
}

/// A field path such as `spec.containers[0].image`, the way operators and upstream's
/// messages name fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FieldPath(Vec<Segment>);

impl FieldPath {
    /// The path one key deeper.
    pub(crate) fn key(&self, key: &str) -> Self {
        let mut next = self.clone();
        next.0.push(Segment::Key(key.to_owned()));
        next
    }

    /// The path to item `index` of the list at this path.
    pub(crate) fn index(&self, index: usize) -> Self {
        let mut next = self.clone();
        next.0.push(Segment::Index(index));
        next
    }

    /// A path from parts (`FieldPath::of(&["spec", "containers"])`).
    pub(crate) fn of(keys: &[&str]) -> Self {
        Self(
            keys.iter()
                .map(|key| Segment::Key((*key).to_owned()))
                .collect(),
        )
    }

    pub(crate) fn segments(&self) -> &[Segment] {
        &self.0
    }

    pub(crate) fn push(&mut self, segment: Segment) {
        self.0.push(segment);
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (at, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Key(key) if at == 0 => write!(f, "{key}")?,
                Segment::Key(key) => write!(f, ".{key}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// One problem with a manifest, printed as `FILE:LINE: FIELD: reason` (or `FILE:LINE: reason`
/// when it concerns the file as a whole), so an operator can jump straight to it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {}{reason}", field_prefix(.field.as_deref()))]
pub struct ManifestError {
    /// The manifest file.
    pub file: String,
    /// The 1-based line the problem is written on (or, for a missing field, its parent's).
    pub line: usize,
    /// The field path (`spec.containers[0].image`), when the problem belongs to a field.
    pub field: Option<String>,
    /// What is wrong.
    pub reason: String,
}

fn field_prefix(field: Option<&str>) -> String {
    field.map_or_else(String::new, |field| format!("{field}: "))
}

/// Why a manifest was rejected: every problem found, in the order of the file, joined on one
/// line by `; ` so a rejection is one log line and one entry in the source's snapshot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", join(.problems))]
pub struct Rejection {
    /// The problems, never empty.
    pub problems: Vec<ManifestError>,
}

fn join(problems: &[ManifestError]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl From<ManifestError> for Rejection {
    fn from(problem: ManifestError) -> Self {
        Self {
            problems: vec![problem],
        }
    }
}

/// A manifest file's name and text, which every error is reported against.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Manifest<'a> {
    pub(crate) file: &'a str,
    pub(crate) text: &'a str,
}

impl Manifest<'_> {
    /// The line `path` is written on; failing that, its deepest written ancestor's; failing
    /// that, the first line with content.
    pub(crate) fn line_of(&self, path: &FieldPath) -> usize {
        let parts: Vec<String> = path
            .segments()
            .iter()
            .map(|segment| match segment {
                Segment::Key(key) => key.clone(),
                Segment::Index(index) => format!("[{index}]"),
            })
            .collect();
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        sergeant_config::locate_field(self.text, &parts)
            .map_or_else(|| self.first_line(), |at| at.line)
    }

    /// The first line holding content, where problems with the whole file are reported.
    pub(crate) fn first_line(&self) -> usize {
        self.text
            .lines()
            .position(|line| {
                let line = line.trim();
                !line.is_empty() && !line.starts_with('#') && line != "---"
            })
            .map_or(1, |index| index + 1)
    }

    /// A problem with the field at `path`.
    pub(crate) fn error(&self, path: &FieldPath, reason: impl Into<String>) -> ManifestError {
        ManifestError {
            file: self.file.to_owned(),
            line: self.line_of(path),
            field: Some(path.to_string()),
            reason: reason.into(),
        }
    }

    /// A problem at a known line that belongs to no field (syntax errors).
    pub(crate) fn error_at(&self, line: usize, reason: impl Into<String>) -> ManifestError {
        ManifestError {
            file: self.file.to_owned(),
            line,
            field: None,
            reason: reason.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_render_like_upstream() {
        let path = FieldPath::of(&["spec", "containers"]).index(1).key("image");
        assert_eq!(path.to_string(), "spec.containers[1].image");
    }

    #[test]
    fn errors_are_one_line_with_file_line_field_and_reason() {
        let text = "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n  - name: b\n    image: \"\"\n";
        let manifest = Manifest {
            file: "/m/p.yaml",
            text,
        };
        let path = FieldPath::of(&["spec", "containers"]).index(1).key("image");
        assert_eq!(
            manifest.error(&path, "required").to_string(),
            "/m/p.yaml:7: spec.containers[1].image: required"
        );
        assert_eq!(manifest.error_at(3, "bad").to_string(), "/m/p.yaml:3: bad");
    }

    #[test]
    fn a_missing_field_points_at_its_parent() {
        let text = "# comment\napiVersion: v1\nkind: Pod\nmetadata:\n  labels: {}\n";
        let manifest = Manifest { file: "f", text };
        assert_eq!(manifest.line_of(&FieldPath::of(&["metadata", "name"])), 4);
        assert_eq!(manifest.line_of(&FieldPath::of(&["nothing"])), 2);
    }
}
