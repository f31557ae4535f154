//! The query of `/containerLogs`: `follow`, `previous`, `timestamps`, `tailLines`,
//! `limitBytes`, `sinceSeconds` and `sinceTime`, validated as upstream (a bad value is a 400
//! naming the parameter).
//!
//! Entry point: [`LogQuery::parse`]. The numbers are upstream's `int64` fields: a value past
//! that range is refused, as upstream's query decoder refuses it; a `sinceSeconds` reaching
//! back past the Unix epoch asks for everything, since every line is newer.

use std::collections::HashMap;
use std::num::IntErrorKind;
use std::time::{Duration, SystemTime};

use k8s_openapi::jiff::Timestamp;

/// Why a log request's query is refused: answered 400 with this text, which names the
/// parameter at fault first (`tailLines: "-1" must be 0 or more`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogQueryError {
    /// A flag that is not a boolean.
    #[error("{parameter}: {value:?} is not a boolean")]
    NotBoolean {
        /// `follow`, `previous` or `timestamps`.
        parameter: &'static str,
        /// The value given.
        value: String,
    },
    /// A count that is not a whole number.
    #[error("{parameter}: {value:?} must be a whole number")]
    NotWhole {
        /// `tailLines`, `limitBytes` or `sinceSeconds`.
        parameter: &'static str,
        /// The value given.
        value: String,
    },
    /// A negative count.
    #[error("{parameter}: {value:?} must be 0 or more")]
    Negative {
        /// `tailLines`, `limitBytes` or `sinceSeconds`.
        parameter: &'static str,
        /// The value given.
        value: String,
    },
    /// A count past upstream's `int64`.
    #[error("{parameter}: {value:?} is out of range (at most {})", i64::MAX)]
    OutOfRange {
        /// `tailLines`, `limitBytes` or `sinceSeconds`.
        parameter: &'static str,
        /// The value given.
        value: String,
    },
    /// A count that must not be 0 is 0.
    #[error("{parameter}: must be greater than 0")]
    Zero {
        /// `limitBytes` or `sinceSeconds`.
        parameter: &'static str,
    },
    /// `sinceTime` is not an RFC 3339 time (or is past the years 1 to 9999).
    #[error("sinceTime: {value:?} is not an RFC 3339 time: {reason}")]
    NotTime {
        /// The value given.
        value: String,
        /// The time parser's reason.
        reason: String,
    },
    /// `sinceSeconds` and `sinceTime` are both given.
    #[error("sinceSeconds and sinceTime cannot both be set")]
    BothSince,
}

/// What a log request asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogQuery {
    /// Keep streaming new lines until the container stops.
    pub follow: bool,
    /// The previous (terminated) instance instead of the current one.
    pub previous: bool,
    /// Prefix each line with its RFC 3339 timestamp.
    pub timestamps: bool,
    /// Only the last this many lines.
    pub tail_lines: Option<u64>,
    /// At most this many bytes.
    pub limit_bytes: Option<u64>,
    /// Only lines written at or after this time.
    pub since: Option<SystemTime>,
}

impl LogQuery {
    /// Reads the query parameters, `now` being the time `sinceSeconds` counts back from.
    ///
    /// # Errors
    /// [`LogQueryError`] for the first bad value, naming its parameter.
    pub fn parse(params: &HashMap<String, String>, now: SystemTime) -> Result<Self, LogQueryError> {
        let flag = |parameter: &'static str| -> Result<bool, LogQueryError> {
            params
                .get(parameter)
                .map_or(Ok(false), |v| match v.as_str() {
                    "" | "true" | "1" => Ok(true),
                    "false" | "0" => Ok(false),
                    other => Err(LogQueryError::NotBoolean {
                        parameter,
                        value: other.to_owned(),
                    }),
                })
        };
        let count = |parameter: &'static str| {
            params
                .get(parameter)
                .map(|v| count(parameter, v))
                .transpose()
        };
        let since_seconds = count("sinceSeconds")?;
        let since_time = params
            .get("sinceTime")
            .map(|v| {
                v.parse::<Timestamp>().map_err(|e| LogQueryError::NotTime {
                    value: v.clone(),
                    reason: e.to_string(),
                })
            })
            .transpose()?;
        if since_seconds.is_some() && since_time.is_some() {
            return Err(LogQueryError::BothSince);
        }
        if since_seconds == Some(0) {
            return Err(LogQueryError::Zero {
                parameter: "sinceSeconds",
            });
        }
        let since = match since_seconds {
            Some(seconds) => seconds_before(now, seconds),
            None => since_time.map(SystemTime::from),
        };
        let limit_bytes = count("limitBytes")?;
        if limit_bytes == Some(0) {
            return Err(LogQueryError::Zero {
                parameter: "limitBytes",
            });
        }
        Ok(Self {
            follow: flag("follow")?,
            previous: flag("previous")?,
            timestamps: flag("timestamps")?,
            tail_lines: count("tailLines")?,
            limit_bytes,
            since,
        })
    }
}

/// Reads `value` of the count `parameter`: a whole number from 0 to `i64::MAX`, the range of
/// upstream's field.
fn count(parameter: &'static str, value: &str) -> Result<u64, LogQueryError> {
    let value_owned = || value.to_owned();
    let negative = || LogQueryError::Negative {
        parameter,
        value: value_owned(),
    };
    match value.parse::<i64>() {
        Ok(n) => u64::try_from(n).map_err(|_| negative()),
        Err(e) if matches!(e.kind(), IntErrorKind::PosOverflow) => Err(LogQueryError::OutOfRange {
            parameter,
            value: value_owned(),
        }),
        Err(e) if matches!(e.kind(), IntErrorKind::NegOverflow) => Err(negative()),
        Err(_) => Err(LogQueryError::NotWhole {
            parameter,
            value: value_owned(),
        }),
    }
}

/// `seconds` before `now`; none (every line) when that reaches back to the Unix epoch or
/// past it.
fn seconds_before(now: SystemTime, seconds: u64) -> Option<SystemTime> {
    now.checked_sub(Duration::from_secs(seconds))
        .filter(|since| *since > SystemTime::UNIX_EPOCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> Result<LogQuery, LogQueryError> {
        LogQuery::parse(
            &pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            SystemTime::now(),
        )
    }

    fn error_of(pairs: &[(&str, &str)]) -> String {
        parse(pairs).expect_err("a bad query").to_string()
    }

    #[test]
    fn values_are_read() {
        let query = parse(&[
            ("follow", "true"),
            ("tailLines", "5"),
            ("limitBytes", "100"),
            ("timestamps", "1"),
            ("sinceTime", "2026-01-02T03:04:05Z"),
        ])
        .unwrap();
        assert!(query.follow && query.timestamps && !query.previous);
        assert_eq!(query.tail_lines, Some(5));
        assert_eq!(query.limit_bytes, Some(100));
        assert!(query.since.is_some());
    }

    #[test]
    fn bad_values_name_their_parameter() {
        assert!(error_of(&[("tailLines", "-1")]).starts_with("tailLines: "));
        assert!(error_of(&[("follow", "maybe")]).starts_with("follow: "));
        assert!(error_of(&[("sinceTime", "yesterday")]).starts_with("sinceTime: "));
        assert!(error_of(&[("limitBytes", "0")]).starts_with("limitBytes: "));
        assert!(error_of(&[("tailLines", "5x")]).starts_with("tailLines: "));
        assert!(error_of(&[("tailLines", "")]).starts_with("tailLines: "));
        assert_eq!(
            parse(&[("sinceSeconds", "5"), ("sinceTime", "2026-01-02T03:04:05Z")]),
            Err(LogQueryError::BothSince)
        );
        assert_eq!(
            parse(&[("tailLines", "-1")]),
            Err(LogQueryError::Negative {
                parameter: "tailLines",
                value: "-1".into()
            })
        );
    }

    #[test]
    fn numbers_past_upstreams_int64_are_refused_naming_the_parameter() {
        for name in ["sinceSeconds", "tailLines", "limitBytes"] {
            for value in [
                "9223372036854775808",
                "18446744073709551615",
                "99999999999999999999999",
            ] {
                let error = error_of(&[(name, value)]);
                assert!(
                    error.starts_with(&format!("{name}: ")) && error.contains("out of range"),
                    "{error}"
                );
            }
            let error = error_of(&[(name, "-99999999999999999999")]);
            assert!(error.contains("0 or more"), "{error}");
        }
    }

    #[test]
    fn since_seconds_past_the_epoch_is_everything() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let since = |seconds: u64| seconds_before(now, seconds);
        assert_eq!(
            since(1),
            Some(SystemTime::UNIX_EPOCH + Duration::from_secs(999))
        );
        assert_eq!(since(1_000), None);
        assert_eq!(since(1_001), None);
        assert_eq!(since(i64::MAX.unsigned_abs()), None);
        assert_eq!(since(u64::MAX), None);
        let query = parse(&[("sinceSeconds", "9223372036854775807")]).unwrap();
        assert_eq!(query.since, None);
    }

    #[test]
    fn the_largest_counts_are_kept_whole() {
        let query = parse(&[
            ("tailLines", "9223372036854775807"),
            ("limitBytes", "9223372036854775807"),
        ])
        .unwrap();
        assert_eq!(query.tail_lines, Some(i64::MAX.unsigned_abs()));
        assert_eq!(query.limit_bytes, Some(i64::MAX.unsigned_abs()));
    }

    #[test]
    fn since_time_takes_the_years_1_to_9999_and_refuses_what_is_past_them() {
        for (time, seconds) in [
            ("0001-01-01T00:00:00Z", -62_135_596_800_i64),
            ("9999-01-01T00:00:00Z", 253_370_764_800),
        ] {
            let since = parse(&[("sinceTime", time)]).unwrap().since.unwrap();
            let expected = if seconds < 0 {
                SystemTime::UNIX_EPOCH - Duration::from_secs(seconds.unsigned_abs())
            } else {
                SystemTime::UNIX_EPOCH + Duration::from_secs(seconds.unsigned_abs())
            };
            assert_eq!(since, expected, "{time}");
        }
        for time in ["99999-01-01T00:00:00Z", "10000-01-01T00:00:00Z"] {
            assert!(error_of(&[("sinceTime", time)]).starts_with("sinceTime: "));
        }
    }
}
