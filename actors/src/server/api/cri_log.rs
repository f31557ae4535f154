//! Reading the CRI log format the runtime writes (`<RFC 3339 time> <stream> <P|F> <text>`, a
//! `P` tag marking a line the runtime split) back into what the container printed, filtered
//! as a log request asks.

use std::time::SystemTime;

use k8s_openapi::jiff::Timestamp;

use super::log_query::LogQuery;

/// One line the container wrote, joined from its partial pieces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// When its first piece was written, as the runtime recorded it.
    pub time: String,
    /// The text, with its newline.
    pub text: String,
}

impl LogLine {
    fn at(&self) -> Option<SystemTime> {
        self.time.parse::<Timestamp>().ok().map(SystemTime::from)
    }
}

/// Parses a CRI log file's text; lines that do not parse are skipped, and a trailing partial
/// line is kept as it is.
#[must_use]
pub fn parse(text: &str) -> Vec<LogLine> {
    let mut lines = Vec::new();
    let mut pending: Option<LogLine> = None;
    for raw in text.lines() {
        let mut fields = raw.splitn(4, ' ');
        let (Some(time), Some(_stream), Some(tag), content) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let content = content.unwrap_or_default();
        let line = pending.get_or_insert_with(|| LogLine {
            time: time.to_owned(),
            text: String::new(),
        });
        line.text.push_str(content);
        if tag != "P" {
            line.text.push('\n');
            lines.extend(pending.take());
        }
    }
    lines.extend(pending);
    lines
}

/// The bytes to answer with for `lines` under `query` (since, tail, timestamps, limit).
#[must_use]
pub fn render(lines: &[LogLine], query: &LogQuery) -> Vec<u8> {
    let kept: Vec<&LogLine> = lines
        .iter()
        .filter(|l| {
            query
                .since
                .is_none_or(|since| l.at().is_none_or(|at| at >= since))
        })
        .collect();
    let start = query
        .tail_lines
        .map_or(0, |tail| kept.len().saturating_sub(tail));
    let mut out = Vec::new();
    for line in &kept[start..] {
        if query.timestamps {
            out.extend_from_slice(line.time.as_bytes());
            out.push(b' ');
        }
        out.extend_from_slice(line.text.as_bytes());
    }
    if let Some(limit) = query.limit_bytes {
        out.truncate(limit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "2026-01-01T00:00:01.000000001Z stdout F one\n\
                        2026-01-01T00:00:02.000000002Z stderr P tw\n\
                        2026-01-01T00:00:02.500000000Z stderr F o\n\
                        garbage\n\
                        2026-01-01T00:00:03.000000003Z stdout F three\n";

    #[test]
    fn partial_pieces_are_joined_and_garbage_skipped() {
        let lines = parse(FILE);
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["one\n", "two\n", "three\n"]);
        assert_eq!(lines[1].time, "2026-01-01T00:00:02.000000002Z");
    }

    #[test]
    fn tail_since_timestamps_and_limit_apply_in_that_order() {
        let lines = parse(FILE);
        let all = LogQuery::default();
        assert_eq!(render(&lines, &all), b"one\ntwo\nthree\n");
        let tail = LogQuery {
            tail_lines: Some(2),
            timestamps: true,
            ..LogQuery::default()
        };
        assert_eq!(
            String::from_utf8(render(&lines, &tail)).unwrap(),
            "2026-01-01T00:00:02.000000002Z two\n2026-01-01T00:00:03.000000003Z three\n"
        );
        let since = LogQuery {
            since: Some(SystemTime::from(
                "2026-01-01T00:00:02.5Z".parse::<Timestamp>().unwrap(),
            )),
            limit_bytes: Some(3),
            ..LogQuery::default()
        };
        assert_eq!(render(&lines, &since), b"thr");
    }
}
