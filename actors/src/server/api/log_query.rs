//! The query of `/containerLogs`: `follow`, `previous`, `timestamps`, `tailLines`,
//! `limitBytes`, `sinceSeconds` and `sinceTime`, validated as upstream (a bad value is a 400
//! naming the parameter).

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use k8s_openapi::jiff::Timestamp;

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
    pub tail_lines: Option<usize>,
    /// At most this many bytes.
    pub limit_bytes: Option<usize>,
    /// Only lines written at or after this time.
    pub since: Option<SystemTime>,
}

impl LogQuery {
    /// Reads the query parameters.
    ///
    /// # Errors
    /// `<parameter>: <reason>` for the first bad value.
    pub fn parse(params: &HashMap<String, String>) -> Result<Self, String> {
        let flag = |name: &str| -> Result<bool, String> {
            params.get(name).map_or(Ok(false), |v| match v.as_str() {
                "" | "true" | "1" => Ok(true),
                "false" | "0" => Ok(false),
                other => Err(format!("{name}: {other:?} is not a boolean")),
            })
        };
        let count = |name: &str| -> Result<Option<u64>, String> {
            params
                .get(name)
                .map(|v| {
                    v.parse::<u64>()
                        .map_err(|_| format!("{name}: {v:?} must be a whole number of 0 or more"))
                })
                .transpose()
        };
        let since_seconds = count("sinceSeconds")?;
        let since_time = params
            .get("sinceTime")
            .map(|v| {
                v.parse::<Timestamp>()
                    .map_err(|e| format!("sinceTime: {v:?} is not an RFC 3339 time: {e}"))
            })
            .transpose()?;
        if since_seconds.is_some() && since_time.is_some() {
            return Err("sinceSeconds and sinceTime cannot both be set".to_owned());
        }
        if since_seconds == Some(0) {
            return Err("sinceSeconds: must be greater than 0".to_owned());
        }
        let since = since_seconds
            .map(|s| SystemTime::now() - Duration::from_secs(s))
            .or_else(|| since_time.map(SystemTime::from));
        let limit_bytes = count("limitBytes")?;
        if limit_bytes == Some(0) {
            return Err("limitBytes: must be greater than 0".to_owned());
        }
        Ok(Self {
            follow: flag("follow")?,
            previous: flag("previous")?,
            timestamps: flag("timestamps")?,
            tail_lines: count("tailLines")?.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
            limit_bytes: limit_bytes.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
            since,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> Result<LogQuery, String> {
        LogQuery::parse(
            &pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        )
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
        assert!(parse(&[("tailLines", "-1")])
            .unwrap_err()
            .starts_with("tailLines: "));
        assert!(parse(&[("follow", "maybe")])
            .unwrap_err()
            .starts_with("follow: "));
        assert!(parse(&[("sinceTime", "yesterday")])
            .unwrap_err()
            .starts_with("sinceTime: "));
        assert!(parse(&[("limitBytes", "0")])
            .unwrap_err()
            .starts_with("limitBytes: "));
        assert!(parse(&[("sinceSeconds", "5"), ("sinceTime", "2026-01-02T03:04:05Z")]).is_err());
    }
}
