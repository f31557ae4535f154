//! A manifest's shape, read in one pass before any parser builds a tree of it: where each field
//! is written ([`LineIndex`], for error messages) and whether the text is too deep or expands
//! too far through aliases for the parsers to read at a cost linear in its size. Entry point:
//! [`outline`].

use std::collections::HashMap;

use super::error::{FieldPath, Segment};
use super::libyaml::{Event, Events};
use crate::limits::{MAX_EXPANDED_BYTES, MAX_NESTING};

/// Why a manifest's shape is refused before parsing, with the line where it was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ShapeError {
    /// Mappings and lists nested deeper than [`MAX_NESTING`].
    #[error("nested more than {MAX_NESTING} levels deep: no pod is this deep")]
    TooDeep {
        /// The line of the first mapping or list too deep.
        line: usize,
    },
    /// Aliases (`*name`) that would expand the document past [`MAX_EXPANDED_BYTES`].
    #[error("its aliases expand it past {MAX_EXPANDED_BYTES} bytes, the size a manifest may have")]
    Expands {
        /// The line of the alias that passed the limit.
        line: usize,
    },
}

impl ShapeError {
    /// The line the problem was found on.
    pub(crate) fn line(&self) -> usize {
        match self {
            Self::TooDeep { line } | Self::Expands { line } => *line,
        }
    }
}

/// Where the fields of a manifest are written: one node per mapping entry and list item of the
/// first document, each with its line (the line of the key, for a mapping entry).
#[derive(Debug, Default)]
pub(crate) struct LineIndex {
    /// The line of each node; node 0 is the document's root.
    lines: Vec<usize>,
    children: HashMap<(usize, Segment), usize>,
}

impl LineIndex {
    /// The line `path` is written on, or that of its deepest ancestor written in the text;
    /// `None` when not even the document's root was read.
    pub(crate) fn line_of(&self, path: &FieldPath) -> Option<usize> {
        let mut node = 0;
        for segment in path.segments() {
            match self.children.get(&(node, segment.clone())) {
                Some(child) => node = *child,
                None => break,
            }
        }
        self.lines.get(node).copied()
    }

    /// A new node under `parent` (the first one wins when a key is written twice).
    fn add(&mut self, parent: Option<usize>, segment: Segment, line: usize) -> Option<usize> {
        let parent = parent?;
        let next = self.lines.len();
        let node = *self.children.entry((parent, segment)).or_insert(next);
        if node == next {
            self.lines.push(line);
        }
        Some(node)
    }
}

/// One open mapping or list.
struct Frame {
    /// Its node in the index; `None` inside what the index does not follow (a mapping used
    /// as a key, a second document).
    node: Option<usize>,
    kind: Kind,
    /// Its size with every alias in it expanded, in bytes of scalar text plus one per node.
    expanded: u64,
    anchor: Option<String>,
}

enum Kind {
    /// A mapping; `Some` holds the key just read and its line, awaiting its value.
    Mapping(Option<(Option<Segment>, usize)>),
    /// A list and the index of its next item.
    Sequence(usize),
}

/// Reads `text` once, as libyaml does, and indexes where its fields are written. A syntax
/// error ends the reading early: the index then holds what came before it, and the parser
/// that reads the text next reports the error.
///
/// # Errors
/// [`ShapeError`] when the text is nested too deep or its aliases expand it too far; the
/// reading stops there, so its cost stays linear in the text.
pub(crate) fn outline(text: &str) -> Result<LineIndex, ShapeError> {
    let mut walk = Walk::default();
    // libyaml fails to set up only when memory runs out, where Rust aborts first anyway.
    let Ok(events) = Events::new(text) else {
        return Ok(walk.index);
    };
    for event in events {
        let Ok((event, line)) = event else { break };
        walk.take(event, line)?;
    }
    Ok(walk.index)
}

#[derive(Default)]
struct Walk {
    index: LineIndex,
    stack: Vec<Frame>,
    /// The expanded size of each anchored node.
    anchors: HashMap<String, u64>,
    expanded: u64,
    documents: usize,
}

impl Walk {
    /// Takes one event.
    fn take(&mut self, event: Event, line: usize) -> Result<(), ShapeError> {
        match event {
            Event::DocumentStart => {
                self.documents += 1;
                // A second document makes the manifest invalid (the parser says so); its
                // fields are not indexed, but its shape is still checked.
                if self.documents == 1 && self.index.lines.is_empty() {
                    self.index.lines.push(line);
                }
            }
            Event::MappingStart(anchor) => self.open(Kind::Mapping(None), anchor, line)?,
            Event::SequenceStart(anchor) => self.open(Kind::Sequence(0), anchor, line)?,
            Event::End => {
                if let Some(frame) = self.stack.pop() {
                    if let Some(anchor) = frame.anchor {
                        self.anchors.insert(anchor, frame.expanded);
                    }
                    if let Some(parent) = self.stack.last_mut() {
                        parent.expanded = parent.expanded.saturating_add(frame.expanded);
                    }
                }
            }
            Event::Scalar(value, anchor) => {
                let size = u64::try_from(value.len())
                    .unwrap_or(u64::MAX)
                    .saturating_add(1);
                self.place(Some(value), line);
                self.grow(size, line)?;
                self.add_to_parent(size);
                if let Some(anchor) = anchor {
                    self.anchors.insert(anchor, size);
                }
            }
            Event::Alias(anchor) => {
                let size = self.anchors.get(&anchor).copied().unwrap_or(1);
                self.place(None, line);
                self.grow(size, line)?;
                self.add_to_parent(size);
            }
            Event::Other => {}
        }
        Ok(())
    }

    /// Opens a mapping or list starting on `line`.
    fn open(&mut self, kind: Kind, anchor: Option<String>, line: usize) -> Result<(), ShapeError> {
        let node = self.place(None, line);
        self.grow(1, line)?;
        self.stack.push(Frame {
            node,
            kind,
            expanded: 1,
            anchor,
        });
        if self.stack.len() > MAX_NESTING {
            return Err(ShapeError::TooDeep { line });
        }
        Ok(())
    }

    /// Counts `size` more bytes of the expanded document.
    fn grow(&mut self, size: u64, line: usize) -> Result<(), ShapeError> {
        self.expanded = self.expanded.saturating_add(size);
        if self.expanded > MAX_EXPANDED_BYTES {
            return Err(ShapeError::Expands { line });
        }
        Ok(())
    }

    fn add_to_parent(&mut self, size: u64) {
        if let Some(parent) = self.stack.last_mut() {
            parent.expanded = parent.expanded.saturating_add(size);
        }
    }

    /// Where a node starting on `line` goes: a key of the open mapping (`key` is its text
    /// when it is a scalar), the value of the key before it, an item of the open list, or
    /// the document's root. Returns its node in the index, if it is indexed.
    fn place(&mut self, key: Option<String>, line: usize) -> Option<usize> {
        let Some(top) = self.stack.last_mut() else {
            return (self.documents == 1).then_some(0);
        };
        match &mut top.kind {
            Kind::Mapping(pending @ None) => {
                *pending = Some((key.map(Segment::Key), line));
                None
            }
            Kind::Mapping(pending @ Some(_)) => {
                let (segment, key_line) = pending.take()?;
                let parent = top.node;
                self.index.add(parent, segment?, key_line)
            }
            Kind::Sequence(next) => {
                let segment = Segment::Index(*next);
                *next = next.saturating_add(1);
                let parent = top.node;
                self.index.add(parent, segment, line)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str, path: &FieldPath) -> Option<usize> {
        outline(text).unwrap().line_of(path)
    }

    fn containers() -> FieldPath {
        FieldPath::of(&["spec", "containers"])
    }

    const POD: &str = "\
# a comment
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web, tier: front}
spec:
  containers:
  - name: a
    image: busybox
  -
    name: b
    command: [sh, -c, 'echo {}']
    env:
    - {name: X, value: y}
";

    #[test]
    fn keys_and_items_have_their_lines() {
        assert_eq!(line(POD, &FieldPath::of(&["metadata", "name"])), Some(5));
        let labels = FieldPath::of(&["metadata", "labels"]);
        assert_eq!(line(POD, &labels.key("tier")), Some(6));
        assert_eq!(line(POD, &containers().index(0).key("image")), Some(10));
        assert_eq!(line(POD, &containers().index(1)), Some(12));
        assert_eq!(line(POD, &containers().index(1).key("name")), Some(12));
        let env = containers().index(1).key("env").index(0);
        assert_eq!(line(POD, &env.key("value")), Some(15));
    }

    #[test]
    fn a_missing_field_points_at_its_deepest_written_ancestor() {
        let path = containers().index(1).key("ports").index(3);
        assert_eq!(line(POD, &path), Some(12));
        assert_eq!(line(POD, &FieldPath::of(&["nothing"])), Some(2));
        assert_eq!(line("", &FieldPath::of(&["a"])), None);
    }

    #[test]
    fn json_is_indexed_too() {
        let text = "{\n  \"metadata\": {\"name\": \"web\"},\n  \"spec\": {\n    \"containers\": [\n      {\"name\": \"a\"},\n      {\n        \"name\": \"b\"\n      }\n    ]\n  }\n}\n";
        assert_eq!(line(text, &containers().index(1).key("name")), Some(7));
        assert_eq!(line(text, &FieldPath::of(&["metadata", "name"])), Some(2));
    }

    #[test]
    fn a_syntax_error_keeps_what_came_before() {
        let text = "metadata:\n  name: web\nspec: [a\n";
        assert_eq!(line(text, &FieldPath::of(&["metadata", "name"])), Some(2));
    }

    #[test]
    fn nesting_is_limited_at_the_first_level_too_deep() {
        let fits = format!(
            "a: {}{}",
            "[".repeat(MAX_NESTING - 1),
            "]".repeat(MAX_NESTING - 1)
        );
        assert!(outline(&fits).is_ok());
        let deep = format!("a:\n  {}", "[".repeat(MAX_NESTING));
        assert_eq!(outline(&deep).unwrap_err(), ShapeError::TooDeep { line: 2 });
        let block = "- ".repeat(MAX_NESTING + 1);
        assert_eq!(
            outline(&block).unwrap_err(),
            ShapeError::TooDeep { line: 1 }
        );
    }

    #[test]
    fn aliases_are_counted_expanded() {
        // Each level doubles the size: ten levels of 2^k copies of a 1000-byte string.
        let mut text = format!("a0: &a0 \"{}\"\n", "x".repeat(1000));
        for level in 1..=20 {
            let previous = level - 1;
            text.push_str(&format!(
                "a{level}: &a{level} [*a{previous}, *a{previous}]\n"
            ));
        }
        let error = outline(&text).unwrap_err();
        assert!(matches!(error, ShapeError::Expands { .. }), "{error:?}");
        assert!(error.line() > 5 && error.line() < 21, "{error:?}");
        // A few aliases within the bound are fine.
        assert!(outline("a: &a [1, 2]\nb: *a\nc: *a\n").is_ok());
    }
}
