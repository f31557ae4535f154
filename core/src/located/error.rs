//! How a manifest problem is reported: [`ManifestError`], one line naming the file, the line,
//! the field path and the reason, and [`Rejection`], the one or more problems that kept a
//! manifest from becoming a pod. [`Manifest`] ties a file's name to its text so every check
//! can point at the line it complains about.

use std::cell::OnceCell;
use std::fmt;

use super::outline::{outline, LineIndex};
use crate::limits::MAX_PROBLEMS_SHOWN;
use crate::names::{cut, MAX_QUOTED_CHARS};

/// The longest reason a problem carries, in characters: reasons quote what the manifest
/// wrote (a parser's message may hold a whole value), and a message must stay readable.
const MAX_REASON_CHARS: usize = 8 * MAX_QUOTED_CHARS;

/// One step of a field path: a key of a mapping or an index into a list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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

/// Keys are shown as written, but a long one (an unknown field, a label key) cut to its first
/// [`MAX_QUOTED_CHARS`] characters and `...`.
impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (at, segment) in self.0.iter().enumerate() {
            let key = match segment {
                Segment::Index(index) => {
                    write!(f, "[{index}]")?;
                    continue;
                }
                Segment::Key(key) => key,
            };
            if at > 0 {
                f.write_str(".")?;
            }
            match cut(key, MAX_QUOTED_CHARS) {
                (whole, false) => f.write_str(whole)?,
                (start, true) => write!(f, "{start}...")?,
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
/// line by `; ` so a rejection is one log line and one entry in the source's snapshot. Past
/// the first [`MAX_PROBLEMS_SHOWN`], problems are counted rather than listed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", join_problems(.problems))]
pub struct Rejection {
    /// The problems, never empty.
    pub problems: Vec<ManifestError>,
}

/// The problems as one line, the first [`MAX_PROBLEMS_SHOWN`] of them in full: how a rejected
/// pod is explained in a log line, an event or a pod's status.
pub fn join_problems<T: ToString>(problems: &[T]) -> String {
    let mut shown: Vec<String> = problems
        .iter()
        .take(MAX_PROBLEMS_SHOWN)
        .map(ToString::to_string)
        .collect();
    if let Some(more) = problems
        .len()
        .checked_sub(MAX_PROBLEMS_SHOWN)
        .filter(|n| *n > 0)
    {
        shown.push(format!("and {more} more problems"));
    }
    shown.join("; ")
}

/// `reason` cut to [`MAX_REASON_CHARS`] characters.
fn clip(reason: String) -> String {
    match cut(&reason, MAX_REASON_CHARS) {
        (_, false) => reason,
        (start, true) => format!("{start}..."),
    }
}

impl From<ManifestError> for Rejection {
    fn from(problem: ManifestError) -> Self {
        Self {
            problems: vec![problem],
        }
    }
}

/// A manifest file's name and text, which every error is reported against, and the index of
/// where its fields are written (read once, when the first line is asked for, unless parsing
/// already read it).
#[derive(Debug)]
pub(crate) struct Manifest<'a> {
    pub(crate) file: &'a str,
    pub(crate) text: &'a str,
    index: OnceCell<LineIndex>,
}

impl<'a> Manifest<'a> {
    /// The manifest `file` holding `text`.
    pub(crate) fn new(file: &'a str, text: &'a str) -> Self {
        Self {
            file,
            text,
            index: OnceCell::new(),
        }
    }

    /// Keeps `index`, read from the text already, for the lines of later errors.
    pub(crate) fn set_index(&self, index: LineIndex) {
        let _ = self.index.set(index);
    }

    /// The line `path` is written on; failing that, its deepest written ancestor's; failing
    /// that, the first line with content. Each call costs the length of the path.
    pub(crate) fn line_of(&self, path: &FieldPath) -> usize {
        self.index
            .get_or_init(|| outline(self.text).unwrap_or_default())
            .line_of(path)
            .unwrap_or_else(|| self.first_line())
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
            reason: clip(reason.into()),
        }
    }

    /// A problem at a known line that belongs to no field (syntax errors).
    pub(crate) fn error_at(&self, line: usize, reason: impl Into<String>) -> ManifestError {
        ManifestError {
            file: self.file.to_owned(),
            line,
            field: None,
            reason: clip(reason.into()),
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
        let manifest = Manifest::new("/m/p.yaml", text);
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
        let manifest = Manifest::new("f", text);
        assert_eq!(manifest.line_of(&FieldPath::of(&["metadata", "name"])), 4);
        assert_eq!(manifest.line_of(&FieldPath::of(&["nothing"])), 2);
    }

    #[test]
    fn many_problems_are_counted_past_the_first_few() {
        let manifest = Manifest::new("f", "a: 1\n");
        let problems: Vec<ManifestError> = (0..MAX_PROBLEMS_SHOWN + 5)
            .map(|n| manifest.error_at(1, format!("p{n}")))
            .collect();
        let text = Rejection { problems }.to_string();
        assert!(text.ends_with("f:1: p19; and 5 more problems"), "{text}");
        assert_eq!(text.matches("f:1:").count(), MAX_PROBLEMS_SHOWN);
    }

    #[test]
    fn long_reasons_are_clipped() {
        let manifest = Manifest::new("f", "");
        let error = manifest.error_at(1, "x".repeat(1_000_000));
        assert_eq!(error.reason.chars().count(), MAX_REASON_CHARS + 3);
    }

    /// The time to locate every label of a pod with `count` labels, one lookup each, as
    /// when every label has a problem.
    fn locate_labels(count: usize) -> std::time::Duration {
        let mut text = String::from("metadata:\n  labels:\n");
        for n in 0..count {
            text.push_str(&format!("    k{n}: v\n"));
        }
        let manifest = Manifest::new("f", &text);
        let labels = FieldPath::of(&["metadata", "labels"]);
        let started = std::time::Instant::now();
        for n in 0..count {
            assert_eq!(manifest.line_of(&labels.key(&format!("k{n}"))), n + 3);
        }
        started.elapsed()
    }

    /// Each lookup searched the whole text, so locating one problem per label cost the square
    /// of the labels; the index is read once, and each lookup costs its path's length.
    #[test]
    fn locating_many_fields_is_linear() {
        // 16 times the fields: a linear cost grows about 16 times, a quadratic one 256 times.
        // The bound sits between (64) so a loaded machine's noise cannot fail a linear cost;
        // the best of three rounds of each size keeps one descheduled round out.
        let best = |n| (0..3).map(|_| locate_labels(n)).min().unwrap_or_default();
        let small = best(2_500);
        let large = best(40_000);
        eprintln!("located 2 500 labels in {small:?}, 40 000 in {large:?}");
        let margin = std::time::Duration::from_millis(200);
        assert!(large <= small * 64 + margin, "{small:?} then {large:?}");
    }
}
