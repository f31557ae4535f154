//! `Duration`: a span of time written the way Go's `time.Duration` prints and parses it
//! ("1m0s", "100ms", "2h45m", "1.5s", "0"), which is how every upstream KubeletConfiguration
//! duration field is spelled.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::ParseError;
use crate::text::{deserialize_parsed, Scalars};

const NANOS_PER_MICRO: u128 = 1_000;
const NANOS_PER_MILLI: u128 = 1_000_000;
const NANOS_PER_SECOND: u128 = 1_000_000_000;
const NANOS_PER_MINUTE: u128 = 60 * NANOS_PER_SECOND;
const NANOS_PER_HOUR: u128 = 60 * NANOS_PER_MINUTE;
/// Go durations are an `int64` count of nanoseconds; longer spans do not exist upstream.
const MAX_NANOS: u128 = i64::MAX as u128;

/// Units Go accepts, longest spelling first so "ms" is not read as "m" followed by "s".
const UNITS: &[(&str, u128)] = &[
    ("ns", 1),
    ("us", NANOS_PER_MICRO),
    ("\u{b5}s", NANOS_PER_MICRO),
    ("\u{3bc}s", NANOS_PER_MICRO),
    ("ms", NANOS_PER_MILLI),
    ("s", NANOS_PER_SECOND),
    ("m", NANOS_PER_MINUTE),
    ("h", NANOS_PER_HOUR),
];

/// A non-negative span of time that reads and writes Go duration strings, so configuration
/// files written for the upstream kubelet parse unchanged and `/debug/config` shows durations
/// the way operators wrote them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(std::time::Duration);

impl Duration {
    /// The zero duration, which several upstream fields use to mean "off".
    pub const ZERO: Duration = Duration(std::time::Duration::ZERO);

    /// A duration of whole seconds, for defaults and tests.
    pub const fn from_secs(secs: u64) -> Self {
        Duration(std::time::Duration::from_secs(secs))
    }

    /// A duration of whole milliseconds, for defaults and tests.
    pub const fn from_millis(millis: u64) -> Self {
        Duration(std::time::Duration::from_millis(millis))
    }

    /// The standard-library duration, for timers.
    pub const fn as_std(self) -> std::time::Duration {
        self.0
    }

    /// Whether this is zero ("disabled" for fields such as `imageMaximumGCAge`).
    pub const fn is_zero(self) -> bool {
        self.0.is_zero()
    }
}

impl From<std::time::Duration> for Duration {
    fn from(value: std::time::Duration) -> Self {
        Duration(value)
    }
}

impl From<Duration> for std::time::Duration {
    fn from(value: Duration) -> Self {
        value.0
    }
}

impl FromStr for Duration {
    type Err = ParseError;

    /// Parses a Go duration: an optional `+`, then one or more `<decimal><unit>` terms with
    /// units ns, us (µs), ms, s, m, h; a bare "0" is zero. Negative durations are refused
    /// because no configuration field gives them a meaning.
    fn from_str(text: &str) -> Result<Self, ParseError> {
        let fail = |reason: DurationProblem| {
            ParseError::new(format!("\"{text}\" is not a duration: {reason}"))
        };
        let body = text.strip_prefix('+').unwrap_or(text);
        if body.starts_with('-') {
            return Err(fail(DurationProblem::Negative));
        }
        if body == "0" {
            return Ok(Duration::ZERO);
        }
        if body.is_empty() {
            return Err(fail(DurationProblem::Empty));
        }
        let mut nanos: u128 = 0;
        let mut rest = body;
        while !rest.is_empty() {
            let (term, after) = parse_term(rest).map_err(fail)?;
            nanos = nanos
                .checked_add(term)
                .filter(|total| *total <= MAX_NANOS)
                .ok_or_else(|| fail(DurationProblem::TooLong))?;
            rest = after;
        }
        let secs =
            u64::try_from(nanos / NANOS_PER_SECOND).map_err(|_| fail(DurationProblem::TooLong))?;
        // The remainder of a division by 1e9 always fits in u32.
        let subsec = (nanos % NANOS_PER_SECOND) as u32;
        Ok(Duration(std::time::Duration::new(secs, subsec)))
    }
}

/// Why a text is not a duration: the reason after `"<text>" is not a duration: ` in the
/// [`ParseError`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum DurationProblem {
    /// A leading `-`.
    #[error("negative durations are not allowed")]
    Negative,
    /// Nothing after the optional `+`.
    #[error("it is empty (write e.g. \"30s\")")]
    Empty,
    /// Past the longest duration Go holds.
    #[error("it is too long")]
    TooLong,
    /// A term that does not start with a number (the rest of the text from there).
    #[error("expected a number at \"{0}\"")]
    NoNumber(String),
    /// A number without a unit.
    #[error("missing unit after \"{0}\" (use ns, us, ms, s, m or h)")]
    NoUnit(String),
    /// A unit that is not one of Go's.
    #[error("unknown unit \"{0}\" (use ns, us, ms, s, m or h)")]
    UnknownUnit(String),
}

/// Parses one `<decimal><unit>` term, returning its nanoseconds and the unparsed rest.
fn parse_term(text: &str) -> Result<(u128, &str), DurationProblem> {
    let number_len = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, after) = text.split_at(number_len);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
        return Err(DurationProblem::NoNumber(text.to_owned()));
    }
    let unit_len = after
        .find(|c: char| c.is_ascii_digit() || c == '.')
        .unwrap_or(after.len());
    let (unit, rest) = after.split_at(unit_len);
    if unit.is_empty() {
        return Err(DurationProblem::NoUnit(number.to_owned()));
    }
    let scale = UNITS
        .iter()
        .find(|(name, _)| *name == unit)
        .map(|(_, scale)| *scale)
        .ok_or_else(|| DurationProblem::UnknownUnit(unit.to_owned()))?;
    let whole_nanos = digits_value(whole)
        .and_then(|value| value.checked_mul(scale))
        .ok_or(DurationProblem::TooLong)?;
    // Fractions finer than a nanosecond are truncated, as Go does; 19 digits is below u128 range.
    let kept = &fraction[..fraction.len().min(19)];
    let fraction_nanos = digits_value(kept)
        .and_then(|value| value.checked_mul(scale))
        .map(|value| value / 10u128.pow(kept.len() as u32))
        .ok_or(DurationProblem::TooLong)?;
    Ok((whole_nanos + fraction_nanos, rest))
}

/// The value of a (possibly empty) run of ASCII digits; `None` when it overflows.
fn digits_value(digits: &str) -> Option<u128> {
    digits.bytes().try_fold(0u128, |value, digit| {
        value.checked_mul(10)?.checked_add(u128::from(digit - b'0'))
    })
}

impl fmt::Display for Duration {
    /// Prints as Go's `Duration.String` does: "0s", "1.5ms", "2m0s", "1h0m0s".
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let nanos = self.0.as_nanos();
        if nanos == 0 {
            return f.write_str("0s");
        }
        if nanos < NANOS_PER_SECOND {
            let (scale, unit) = if nanos < NANOS_PER_MICRO {
                (1, "ns")
            } else if nanos < NANOS_PER_MILLI {
                (NANOS_PER_MICRO, "\u{b5}s")
            } else {
                (NANOS_PER_MILLI, "ms")
            };
            return write_decimal(f, nanos, scale).and_then(|()| f.write_str(unit));
        }
        let hours = nanos / NANOS_PER_HOUR;
        let minutes = nanos % NANOS_PER_HOUR / NANOS_PER_MINUTE;
        if hours > 0 {
            write!(f, "{hours}h")?;
        }
        if hours > 0 || minutes > 0 {
            write!(f, "{minutes}m")?;
        }
        write_decimal(f, nanos % NANOS_PER_MINUTE, NANOS_PER_SECOND)?;
        f.write_str("s")
    }
}

/// Writes `value / scale` with the fraction's trailing zeros dropped ("1.5", "2", "0.25").
fn write_decimal(f: &mut fmt::Formatter, value: u128, scale: u128) -> fmt::Result {
    write!(f, "{}", value / scale)?;
    let fraction = value % scale;
    if fraction == 0 {
        return Ok(());
    }
    let width = scale.ilog10() as usize;
    let digits = format!("{fraction:0width$}");
    write!(f, ".{}", digits.trim_end_matches('0'))
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_parsed(
            deserializer,
            "a duration string such as \"1m30s\"",
            Scalars::StringsOnly,
        )
    }
}
