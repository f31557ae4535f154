//! Finding things in the source text: where each YAML document starts and ends, and on which
//! line a key path (e.g. `evictionSoft` → `memory.available`) is written. Checks that run after
//! parsing use this to point at the offending key.

use crate::error::Location;

/// The lines `[start, end)` (0-based) one YAML document occupies, its `---` marker included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// Splits the text at document markers (`---` at the start of a line). YAML forbids such a
/// line inside any value, so the split agrees with a YAML parser's.
pub(crate) fn split_documents(text: &str) -> Vec<Span> {
    let mut spans = Vec::new();
    let mut start = 0;
    let mut count = 0;
    for (index, line) in text.lines().enumerate() {
        count = index + 1;
        if index > start && is_document_marker(line) {
            spans.push(Span { start, end: index });
            start = index;
        }
    }
    spans.push(Span {
        start,
        end: count.max(start),
    });
    spans
}

fn is_document_marker(line: &str) -> bool {
    line.strip_prefix("---")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\r']))
}

/// The text of one document with every line before it left blank, so a parser reading it
/// reports the document's positions as lines of the whole file.
pub(crate) fn document_text(text: &str, span: Span) -> String {
    let mut out = "\n".repeat(span.start);
    for line in text.lines().skip(span.start).take(span.end - span.start) {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The position of the first line in the span that holds content (not blank, not a comment,
/// not the document marker): where a problem with the document as a whole is reported.
pub(crate) fn document_start(text: &str, span: Span) -> Option<Location> {
    lines_in(text, span)
        .find(|(_, line)| !is_document_marker(line) && content_indent(line).is_some())
        .and_then(|(index, line)| {
            content_indent(line).map(|indent| Location {
                line: index + 1,
                column: indent + 1,
            })
        })
}

/// Where the key path is written in the document: the deepest key of `path` that can be found
/// (so a check on a field absent from the file still points at its parent when the parent is
/// there). Block mappings are followed by indentation; flow mappings (`{a: 1}`) by a textual
/// search after the parent key.
pub(crate) fn locate(text: &str, span: Span, path: &[&str]) -> Option<Location> {
    let mut found: Option<Location> = None;
    let mut scope = span;
    let mut parent_indent: Option<usize> = None;
    for segment in path {
        if let Some(index) = list_index(segment) {
            let Some((line, indent, end)) = list_item(text, scope, index) else {
                break;
            };
            found = Some(Location {
                line: line + 1,
                column: indent + 1,
            });
            scope = Span { start: line, end };
            parent_indent = Some(indent);
            continue;
        }
        let block = lines_in(text, scope)
            .filter_map(|(index, line)| {
                let (indent, key) = block_key(line)?;
                let deeper = parent_indent.is_none_or(|parent| indent > parent);
                (deeper && key == *segment).then_some((index, indent))
            })
            .min_by_key(|(_, indent)| *indent);
        if let Some((index, indent)) = block {
            found = Some(Location {
                line: index + 1,
                column: indent + 1,
            });
            scope = Span {
                start: index + 1,
                end: block_end(text, index, indent, scope.end),
            };
            parent_indent = Some(indent);
            continue;
        }
        let from = found.map_or(span.start, |at| at.line - 1);
        match flow_key(
            text,
            Span {
                start: from,
                end: scope.end,
            },
            segment,
            found,
        ) {
            Some(at) => {
                found = Some(at);
                scope = Span {
                    start: at.line - 1,
                    end: scope.end,
                };
            }
            None => break,
        }
    }
    found
}

/// The lines (0-based, end excluded) that the block mapping key at exactly `path` and its
/// value take in the document; `None` when that key is not written as a block key (absent, or
/// inside a flow mapping).
pub(crate) fn key_lines(text: &str, span: Span, path: &[&str]) -> Option<(usize, usize)> {
    let at = locate(text, span, path)?;
    let index = at.line - 1;
    let line = text.lines().nth(index)?;
    let (indent, key) = block_key(line)?;
    (Some(&key) == path.last()).then(|| (index, block_end(text, index, indent, span.end)))
}

/// Where a field path is written in single-document text: YAML, or JSON printed one key per
/// line. Segments are keys, or `[n]` for the n-th item of a list (`["spec", "containers", "[1]",
/// "image"]`); the deepest segment found wins, as in [`locate`]. This exists so that manifests
/// other than the configuration (static pod files) point at their lines the same way.
#[must_use]
pub fn locate_field(text: &str, path: &[&str]) -> Option<Location> {
    let whole = Span {
        start: 0,
        end: text.lines().count(),
    };
    locate(text, whole, path)
}

/// `[n]` → `n`.
fn list_index(segment: &str) -> Option<usize> {
    segment.strip_prefix('[')?.strip_suffix(']')?.parse().ok()
}

/// The `index`-th item of the list written in `scope`: its first line (0-based), its column
/// and the line where it ends. Items are the shallowest `- ` lines (YAML), or failing those
/// the shallowest lines opening with `{` (JSON).
fn list_item(text: &str, scope: Span, index: usize) -> Option<(usize, usize, usize)> {
    let opens = |line: &str, marker: char| {
        let rest = line.trim_start_matches(' ');
        let item = if marker == '-' {
            is_list_item(line)
        } else {
            rest.starts_with(marker)
        };
        item.then(|| line.len() - rest.len())
    };
    let items = ['-', '{'].into_iter().find_map(|marker| {
        let starts: Vec<(usize, usize)> = lines_in(text, scope)
            .filter_map(|(at, line)| opens(line, marker).map(|indent| (at, indent)))
            .collect();
        let shallowest = starts.iter().map(|(_, indent)| *indent).min()?;
        Some(
            starts
                .into_iter()
                .filter(|(_, indent)| *indent == shallowest)
                .collect::<Vec<_>>(),
        )
    })?;
    let (line, indent) = *items.get(index)?;
    let end = items.get(index + 1).map_or(scope.end, |(next, _)| *next);
    Some((line, indent, end))
}

/// Whether the line's content starts a block list item (`- x`, or `-` alone).
fn is_list_item(line: &str) -> bool {
    line.trim_start_matches(' ')
        .strip_prefix('-')
        .is_some_and(|after| after.is_empty() || after.starts_with([' ', '\r']))
}

fn lines_in(text: &str, span: Span) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .skip(span.start)
        .take(span.end.saturating_sub(span.start))
}

/// The indentation of a line with content, `None` for blank and comment-only lines.
fn content_indent(line: &str) -> Option<usize> {
    let trimmed = line.trim_start_matches(' ');
    let rest = trimmed.trim();
    (!rest.is_empty() && !rest.starts_with('#')).then(|| line.len() - trimmed.len())
}

/// The first line after `index` whose content is not indented deeper than `indent`.
fn block_end(text: &str, index: usize, indent: usize, limit: usize) -> usize {
    lines_in(
        text,
        Span {
            start: index + 1,
            end: limit,
        },
    )
    .find(|(_, line)| {
        content_indent(line).is_some_and(|own| {
            // A list may sit at its key's own indentation (`key:` then `- item`).
            own < indent || (own == indent && !is_list_item(line))
        })
    })
    .map_or(limit, |(found, _)| found)
}

/// A block mapping key at the start of a line (after any `- ` list markers): its column
/// (0-based, in characters) and its unquoted text.
fn block_key(line: &str) -> Option<(usize, &str)> {
    let mut rest = line.trim_start_matches(' ');
    while let Some(item) = rest.strip_prefix("- ") {
        rest = item.trim_start_matches(' ');
    }
    let indent = line[..line.len() - rest.len()].chars().count();
    let (key, after) = split_key(rest)?;
    let after = after.trim_start_matches(' ');
    let colon_ends = after
        .strip_prefix(':')
        .is_some_and(|value| value.is_empty() || value.starts_with([' ', '\t', '\r']));
    colon_ends.then_some((indent, key))
}

/// Splits a leading key (quoted or plain) from the text after it.
fn split_key(text: &str) -> Option<(&str, &str)> {
    for quote in ['"', '\''] {
        if let Some(inner) = text.strip_prefix(quote) {
            let end = inner.find(quote)?;
            return Some((&inner[..end], &inner[end + 1..]));
        }
    }
    let end = text.find(": ").or_else(|| {
        let trimmed = text.trim_end();
        trimmed.ends_with(':').then(|| trimmed.len() - 1)
    })?;
    Some((text[..end].trim_end(), &text[end..]))
}

/// A key inside a flow mapping: `segment` after `{`, `,` or whitespace (optionally quoted),
/// followed by `:`, searched from just after the parent key.
fn flow_key(text: &str, span: Span, segment: &str, after: Option<Location>) -> Option<Location> {
    for (index, line) in lines_in(text, span) {
        let skip = match after {
            Some(at) if at.line == index + 1 => byte_offset(line, at.column),
            _ => 0,
        };
        let mut search_from = skip;
        while let Some(relative) = line.get(search_from..)?.find(segment) {
            let start = search_from + relative;
            if flow_key_at(line, start, segment) {
                let (begin, _) = unquoted_bounds(line, start, segment);
                return Some(Location {
                    line: index + 1,
                    column: line[..begin].chars().count() + 1,
                });
            }
            search_from = start + segment.len();
        }
    }
    None
}

fn byte_offset(line: &str, column: usize) -> usize {
    line.char_indices()
        .nth(column.saturating_sub(1))
        .map_or(line.len(), |(offset, _)| offset)
}

/// Whether `segment` at byte `start` is a whole key: delimited before by `{`, `,`, a space or a
/// quote, and followed (after an optional closing quote and spaces) by `:`.
fn flow_key_at(line: &str, start: usize, segment: &str) -> bool {
    let (begin, end) = unquoted_bounds(line, start, segment);
    let before_ok = line[..begin]
        .chars()
        .next_back()
        .is_none_or(|c| matches!(c, '{' | ',' | ' ' | '\t'));
    before_ok && line[end..].trim_start_matches(' ').starts_with(':')
}

/// The byte range of the key including its quotes, if it is quoted.
fn unquoted_bounds(line: &str, start: usize, segment: &str) -> (usize, usize) {
    let end = start + segment.len();
    for quote in ['"', '\''] {
        if line[..start].ends_with(quote) && line[end..].starts_with(quote) {
            return (start - 1, end + 1);
        }
    }
    (start, end)
}

/// Where `key` is written as a block mapping key for the second time in the document: the
/// repetition serde_yaml refuses but reports at the start of the mapping.
pub(crate) fn locate_repeated(text: &str, span: Span, key: &str) -> Option<Location> {
    lines_in(text, span)
        .filter_map(|(index, line)| {
            let (indent, found) = block_key(line)?;
            (found == key).then_some(Location {
                line: index + 1,
                column: indent + 1,
            })
        })
        .nth(1)
}
