//! Reading the CRI log format the runtime writes (`<RFC 3339 time> <stream> <P|F> <text>`, a
//! `P` tag marking a piece of a line the runtime split) back into what the container printed,
//! filtered as a log request asks.
//!
//! Entry point: [`Renderer`], fed the file's bytes in chunks of any size: it keeps only the
//! head of the line it is in (at most [`MAX_HEAD`] bytes), never a whole line, so a log of
//! any size and lines of any length cost bounded memory. [`line_head`] reads one line's head
//! for the search of a tail's start. The text is passed on as bytes: what the container wrote
//! need not be UTF-8.

use std::time::SystemTime;

use k8s_openapi::jiff::Timestamp;

use super::log_query::LogQuery;

/// The longest head (`<time> <stream> <tags>`) of a CRI line: an RFC 3339 time with
/// nanoseconds and a zone offset is 35 bytes, the stream 6, the tags a few. A line whose head
/// is longer is not CRI and is skipped.
pub const MAX_HEAD: usize = 128;

/// What the head of a CRI line says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// When the runtime wrote the line.
    pub at: SystemTime,
    /// Whether the line is a piece of a longer one (`P`): the line goes on in the next.
    pub partial: bool,
}

/// Reads a head (`<time> <stream> <tags>`, without the space after it): a time that parses,
/// `stdout` or `stderr`, and the tags, the first of which is `P` for a partial line. `None`
/// for anything else.
#[must_use]
pub fn head(bytes: &[u8]) -> Option<Head> {
    if bytes.len() > MAX_HEAD {
        return None;
    }
    let mut fields = bytes.splitn(3, |b| *b == b' ');
    let (time, stream, tags) = (fields.next()?, fields.next()?, fields.next()?);
    if !matches!(stream, b"stdout" | b"stderr") || tags.contains(&b' ') {
        return None;
    }
    let at = std::str::from_utf8(time).ok()?.parse::<Timestamp>().ok()?;
    Some(Head {
        at: SystemTime::from(at),
        partial: tags.split(|b| *b == b':').next() == Some(b"P"),
    })
}

/// The head of the line `bytes` starts with, when `bytes` holds it whole: the text up to the
/// third space, or up to the line's end.
#[must_use]
pub fn line_head(bytes: &[u8]) -> Option<Head> {
    let mut spaces = 0;
    let end = bytes
        .iter()
        .take(MAX_HEAD + 1)
        .position(|b| {
            spaces += usize::from(*b == b' ');
            *b == b'\n' || spaces == 3
        })
        .unwrap_or(bytes.len());
    head(&bytes[..end])
}

/// Where the renderer is within the current line of the file.
#[derive(Debug)]
enum Within {
    /// Reading the head: the bytes so far, and how many of them are spaces.
    Head(Vec<u8>, usize),
    /// In the text: whether it is kept, whether the line is a partial piece.
    Text { kept: bool, partial: bool },
    /// In a line that is not CRI, up to its end.
    Garbage,
}

/// Turns CRI log bytes into the answer to a log request: lines before `since` left out, each
/// line's time in front with `timestamps`, the pieces of a split line joined, and no more than
/// `limitBytes` in all. The tail is not its business: the caller starts it at the tail.
#[derive(Debug)]
pub struct Renderer {
    since: Option<SystemTime>,
    timestamps: bool,
    left: Option<u64>,
    within: Within,
    /// Whether the line whose pieces are being read is kept; none between lines.
    joined: Option<bool>,
}

impl Renderer {
    /// A renderer for `query`, at the start of a line.
    #[must_use]
    pub fn new(query: &LogQuery) -> Self {
        Self {
            since: query.since,
            timestamps: query.timestamps,
            left: query.limit_bytes,
            within: Within::Head(Vec::new(), 0),
            joined: None,
        }
    }

    /// Whether the byte limit is reached: nothing more will be rendered.
    #[must_use]
    pub fn full(&self) -> bool {
        self.left == Some(0)
    }

    /// The file changed under a followed log (rotated): what comes next starts a new line of
    /// the file, though it may go on with a split line.
    pub fn restart(&mut self) {
        self.within = Within::Head(Vec::new(), 0);
    }

    /// Appends to `out` what the next bytes of the file, `input`, render to.
    pub fn feed(&mut self, mut input: &[u8], out: &mut Vec<u8>) {
        while !input.is_empty() && !self.full() {
            input = match &mut self.within {
                Within::Head(bytes, spaces) => {
                    let Some((&byte, rest)) = input.split_first() else {
                        break;
                    };
                    if byte == b'\n' || (byte == b' ' && *spaces == 2) {
                        let bytes = std::mem::take(bytes);
                        self.start(&bytes, out);
                        if byte == b'\n' {
                            self.end_line(out);
                        }
                    } else if bytes.len() < MAX_HEAD {
                        bytes.push(byte);
                        *spaces += usize::from(byte == b' ');
                    } else {
                        self.within = Within::Garbage;
                    }
                    rest
                }
                Within::Text { kept, .. } => {
                    let kept = *kept;
                    let end = input.iter().position(|b| *b == b'\n');
                    let text = &input[..end.unwrap_or(input.len())];
                    if kept {
                        self.emit(text, out);
                    }
                    match end {
                        Some(end) => {
                            self.end_line(out);
                            &input[end + 1..]
                        }
                        None => &[],
                    }
                }
                Within::Garbage => match input.iter().position(|b| *b == b'\n') {
                    Some(end) => {
                        self.within = Within::Head(Vec::new(), 0);
                        &input[end + 1..]
                    }
                    None => &[],
                },
            };
        }
    }

    /// A head, `bytes`, was read: the text that follows is kept or not, the line's time put in
    /// front.
    fn start(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        let Some(head) = head(bytes) else {
            self.within = Within::Garbage;
            return;
        };
        let kept = match self.joined {
            Some(kept) => kept,
            None => {
                let kept = self.since.is_none_or(|since| head.at >= since);
                if kept && self.timestamps {
                    let time = bytes.split(|b| *b == b' ').next().unwrap_or_default();
                    self.emit(time, out);
                    self.emit(b" ", out);
                }
                kept
            }
        };
        self.within = Within::Text {
            kept,
            partial: head.partial,
        };
    }

    /// The end of a line of the file: the end of the container's line too unless it was a
    /// partial piece.
    fn end_line(&mut self, out: &mut Vec<u8>) {
        if let Within::Text { kept, partial } = self.within {
            if partial {
                self.joined = Some(kept);
            } else {
                if kept {
                    self.emit(b"\n", out);
                }
                self.joined = None;
            }
        }
        self.within = Within::Head(Vec::new(), 0);
    }

    /// Appends `bytes` to `out`, as much as the limit leaves room for.
    fn emit(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        let room = self.left.map_or(bytes.len(), |left| {
            bytes.len().min(usize::try_from(left).unwrap_or(usize::MAX))
        });
        out.extend_from_slice(&bytes[..room]);
        if let Some(left) = &mut self.left {
            *left = left.saturating_sub(u64::try_from(room).unwrap_or(u64::MAX));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &[u8] = b"2026-01-01T00:00:01.000000001Z stdout F one\n\
                          2026-01-01T00:00:02.000000002Z stderr P tw\n\
                          2026-01-01T00:00:02.500000000Z stderr F o\n\
                          garbage\n\
                          2026-01-01T00:00:03.000000003Z stdout F three\n";

    fn render(input: &[u8], query: &LogQuery) -> Vec<u8> {
        let mut out = Vec::new();
        Renderer::new(query).feed(input, &mut out);
        out
    }

    #[test]
    fn partial_pieces_are_joined_and_garbage_skipped() {
        assert_eq!(render(FILE, &LogQuery::default()), b"one\ntwo\nthree\n");
    }

    #[test]
    fn since_timestamps_and_limit_apply() {
        let stamped = LogQuery {
            timestamps: true,
            ..LogQuery::default()
        };
        assert_eq!(
            String::from_utf8(render(&FILE[..88], &stamped)).unwrap(),
            "2026-01-01T00:00:01.000000001Z one\n2026-01-01T00:00:02.000000002Z tw"
        );
        let since = LogQuery {
            since: Some(SystemTime::from(
                "2026-01-01T00:00:02.5Z".parse::<Timestamp>().unwrap(),
            )),
            limit_bytes: Some(3),
            ..LogQuery::default()
        };
        assert_eq!(render(FILE, &since), b"thr");
    }

    #[test]
    fn any_split_of_the_input_renders_the_same() {
        let mut file = FILE.to_vec();
        file.extend_from_slice(b"2026-01-01T00:00:04Z stdout F \xff\xfe not UTF-8 \xe2\x82\n");
        file.extend_from_slice(b"2026-01-01T00:00:05Z stdout F\n");
        let query = LogQuery {
            timestamps: true,
            ..LogQuery::default()
        };
        let whole = render(&file, &query);
        assert!(whole.ends_with(b"\xff\xfe not UTF-8 \xe2\x82\n2026-01-01T00:00:05Z \n"));
        for size in 1..=file.len() {
            let mut renderer = Renderer::new(&query);
            let mut out = Vec::new();
            for chunk in file.chunks(size) {
                renderer.feed(chunk, &mut out);
            }
            assert_eq!(out, whole, "chunks of {size}");
        }
    }

    #[test]
    fn a_line_of_any_length_costs_only_its_head() {
        let mut file = b"2026-01-01T00:00:01Z stdout F ".to_vec();
        file.extend(std::iter::repeat_n(b'x', 1 << 20));
        file.push(b'\n');
        let mut renderer = Renderer::new(&LogQuery::default());
        let mut out = Vec::new();
        let mut chunks = file.chunks(4096);
        renderer.feed(chunks.next().unwrap(), &mut out);
        assert_eq!(out.len(), 4096 - 30, "the text is passed on as it comes");
        for chunk in chunks {
            renderer.feed(chunk, &mut out);
        }
        assert_eq!(out.len(), (1 << 20) + 1);
        let mut garbage = vec![b'y'; 1 << 20];
        garbage.extend_from_slice(b"\n2026-01-01T00:00:01Z stdout F after\n");
        assert_eq!(render(&garbage, &LogQuery::default()), b"after\n");
    }

    #[test]
    fn heads_that_are_not_cri_are_refused() {
        assert!(head(b"2026-01-01T00:00:01Z stdout F").is_some());
        assert!(head(b"2026-01-01T00:00:01Z stdout P:x").unwrap().partial);
        for bad in [
            &b"yesterday stdout F"[..],
            b"2026-01-01T00:00:01Z stdin F",
            b"2026-01-01T00:00:01Z stdout",
            b"99999-01-01T00:00:01Z stdout F",
            b"",
        ] {
            assert_eq!(head(bad), None, "{}", String::from_utf8_lossy(bad));
        }
        assert_eq!(
            line_head(b"2026-01-01T00:00:01Z stdout F text with spaces\n"),
            head(b"2026-01-01T00:00:01Z stdout F")
        );
        assert!(line_head(b"2026-01-01T00:00:01Z stdout F\nnext").is_some());
    }
}
