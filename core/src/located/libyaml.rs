//! YAML parse events with their lines, pulled one at a time from libyaml (the unsafe-libyaml
//! translation serde_yaml itself runs on), so the same parser decides what the text means.
//! Entry point: [`Events::new`].
//!
//! serde_yaml reads a whole document into memory before its own depth limit looks at it, and
//! libyaml's scanner spends time proportional to the flow nesting depth on every token, so a
//! deeply nested manifest costs the square of its size. Pulled one by one, the events let the
//! outline ([`super::outline`]) stop at the first level too deep, having spent a cost linear in
//! what it read.
//!
//! This is the only `unsafe` of the sources: libyaml's API is C's, made of raw pointers. Each
//! block says what keeps it sound.

use std::ffi::CStr;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

use unsafe_libyaml as unsafe_sys;

/// What the outline needs of one parse event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Event {
    /// The start of a document (`---`, or the implicit start of the text).
    DocumentStart,
    /// The start of a mapping, with its anchor (`&name`) if it has one.
    MappingStart(Option<String>),
    /// The start of a sequence, with its anchor if it has one.
    SequenceStart(Option<String>),
    /// The end of the innermost open mapping or sequence.
    End,
    /// A scalar: its text and its anchor.
    Scalar(String, Option<String>),
    /// An alias (`*name`) to an anchored node.
    Alias(String),
    /// Anything else (the end of a document).
    Other,
}

/// libyaml could not parse the text; serde_yaml, reading the same text, says why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SyntaxError;

/// A libyaml parser over one text, yielding its events and their 1-based lines.
pub(crate) struct Events<'a> {
    /// Boxed: libyaml keeps a pointer to the parser in the parser (its read handler's data),
    /// so it must not move once the input is set.
    parser: Box<unsafe_sys::yaml_parser_t>,
    finished: bool,
    /// libyaml reads the text through a raw pointer: the text must outlive the parser.
    text: PhantomData<&'a str>,
}

impl<'a> Events<'a> {
    /// A parser reading `text`, set up as serde_yaml sets up its own (UTF-8 input).
    ///
    /// # Errors
    /// [`SyntaxError`] when libyaml cannot set up a parser (it failed to allocate).
    pub(crate) fn new(text: &'a str) -> Result<Self, SyntaxError> {
        let mut parser = Box::<unsafe_sys::yaml_parser_t>::new_uninit();
        let length = u64::try_from(text.len()).map_err(|_| SyntaxError)?;
        // SAFETY: `parser` points at writable, properly aligned memory for a parser, which
        // `yaml_parser_initialize` fills in whole before anything reads it. The input pointer
        // and length describe `text`, which the `'a` lifetime keeps alive and unchanged for as
        // long as the parser exists.
        let parser = unsafe {
            if unsafe_sys::yaml_parser_initialize(parser.as_mut_ptr()).fail {
                return Err(SyntaxError);
            }
            let mut parser = parser.assume_init();
            unsafe_sys::yaml_parser_set_encoding(&mut *parser, unsafe_sys::YAML_UTF8_ENCODING);
            unsafe_sys::yaml_parser_set_input_string(&mut *parser, text.as_ptr(), length);
            parser
        };
        Ok(Self {
            parser,
            finished: false,
            text: PhantomData,
        })
    }
}

impl Iterator for Events<'_> {
    type Item = Result<(Event, usize), SyntaxError>;

    /// The next event and its line, until the end of the text or the first syntax error.
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.finished {
                return None;
            }
            let mut raw = MaybeUninit::<unsafe_sys::yaml_event_t>::uninit();
            // SAFETY: the parser was initialized in `new` and has not failed before (a failure
            // sets `finished`); `raw` is writable memory for one event.
            if unsafe { unsafe_sys::yaml_parser_parse(&mut *self.parser, raw.as_mut_ptr()) }.fail {
                self.finished = true;
                return Some(Err(SyntaxError));
            }
            // SAFETY: a successful `yaml_parser_parse` wrote a whole event into `raw`; it is
            // read, then freed exactly once with `yaml_event_delete`.
            let (kind, event, line) = unsafe {
                let mut raw = raw.assume_init();
                let converted = (raw.type_, convert(&raw), raw.start_mark.line);
                unsafe_sys::yaml_event_delete(&mut raw);
                converted
            };
            match kind {
                unsafe_sys::YAML_STREAM_START_EVENT => continue,
                unsafe_sys::YAML_STREAM_END_EVENT => {
                    self.finished = true;
                    return None;
                }
                _ => {}
            }
            let line = usize::try_from(line).map_or(usize::MAX, |line| line.saturating_add(1));
            return Some(Ok((event, line)));
        }
    }
}

impl Drop for Events<'_> {
    fn drop(&mut self) {
        // SAFETY: the parser was initialized in `new` and is deleted only here, once.
        unsafe { unsafe_sys::yaml_parser_delete(&mut *self.parser) }
    }
}

/// The event's kind and the text it carries.
///
/// # Safety
/// `raw` must be an event `yaml_parser_parse` produced and that was not deleted yet: its type
/// says which member of its data union is set, and its pointers are null or valid.
unsafe fn convert(raw: &unsafe_sys::yaml_event_t) -> Event {
    // SAFETY (for each arm): the union member read is the one the event's type sets.
    match raw.type_ {
        unsafe_sys::YAML_DOCUMENT_START_EVENT => Event::DocumentStart,
        unsafe_sys::YAML_MAPPING_START_EVENT => {
            Event::MappingStart(unsafe { c_text(raw.data.mapping_start.anchor) })
        }
        unsafe_sys::YAML_SEQUENCE_START_EVENT => {
            Event::SequenceStart(unsafe { c_text(raw.data.sequence_start.anchor) })
        }
        unsafe_sys::YAML_MAPPING_END_EVENT | unsafe_sys::YAML_SEQUENCE_END_EVENT => Event::End,
        unsafe_sys::YAML_SCALAR_EVENT => {
            let scalar = unsafe { raw.data.scalar };
            let value = usize::try_from(scalar.length)
                .ok()
                .filter(|length| *length > 0 && !scalar.value.is_null())
                .map_or_else(String::new, |length| {
                    // SAFETY: libyaml's scalar value is `length` initialized bytes.
                    let bytes = unsafe { std::slice::from_raw_parts(scalar.value, length) };
                    String::from_utf8_lossy(bytes).into_owned()
                });
            Event::Scalar(value, unsafe { c_text(scalar.anchor) })
        }
        unsafe_sys::YAML_ALIAS_EVENT => {
            Event::Alias(unsafe { c_text(raw.data.alias.anchor) }.unwrap_or_default())
        }
        _ => Event::Other,
    }
}

/// A NUL-terminated string of libyaml's, or `None` for a null pointer.
///
/// # Safety
/// `text` must be null or point at a NUL-terminated string that outlives the call.
unsafe fn c_text(text: *const u8) -> Option<String> {
    if text.is_null() {
        return None;
    }
    // SAFETY: non-null, and NUL-terminated by the caller's promise.
    let text = unsafe { CStr::from_ptr(text.cast()) };
    Some(text.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str) -> Vec<Result<(Event, usize), SyntaxError>> {
        Events::new(text).unwrap().collect()
    }

    #[test]
    fn yields_events_with_their_lines() {
        let all = events("a: &x 1\nb:\n- *x\n- [c]\n");
        let scalar = |text: &str, line| Ok((Event::Scalar(text.into(), None), line));
        assert_eq!(
            all,
            [
                Ok((Event::DocumentStart, 1)),
                Ok((Event::MappingStart(None), 1)),
                scalar("a", 1),
                Ok((Event::Scalar("1".into(), Some("x".into())), 1)),
                scalar("b", 2),
                Ok((Event::SequenceStart(None), 3)),
                Ok((Event::Alias("x".into()), 3)),
                Ok((Event::SequenceStart(None), 4)),
                scalar("c", 4),
                Ok((Event::End, 4)),
                Ok((Event::End, 5)),
                Ok((Event::End, 5)),
                Ok((Event::Other, 5)),
            ]
        );
    }

    #[test]
    fn stops_at_the_first_syntax_error() {
        let all = events("a: [b\nc: d\n");
        assert_eq!(all.last(), Some(&Err(SyntaxError)));
        assert_eq!(all.iter().filter(|e| e.is_err()).count(), 1);
    }

    #[test]
    fn the_empty_text_has_no_document() {
        assert!(events("").is_empty());
    }
}
