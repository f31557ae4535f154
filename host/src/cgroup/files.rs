//! Which file of which controller holds a limit, in each cgroup version: pure translation, so
//! the same limits read the same on a cgroup v1 node and a unified (v2) one. Entry points:
//! [`Setting::files`] and [`read_back`].

use super::fs::Version;
use crate::stats::ParseError;

/// The CFS period of every quota, in microseconds (`cpu.cfs_period_us`, `cpu.max`'s second
/// field).
pub(super) const CPU_PERIOD_US: i64 = 100_000;
/// cgroup v1's largest `cpu.shares` and v2's `cpu.weight` range, for the conversion upstream
/// and runc use.
const MAX_SHARES: i64 = 262_144;
const MIN_SHARES: i64 = 2;
const MAX_WEIGHT: i64 = 10_000;
/// A v1 memory limit past this is the kernel's "unlimited".
const V1_UNLIMITED_MEMORY: i64 = 1 << 62;

/// One limit a cgroup is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Setting {
    /// The cpu weight, in v1 shares.
    CpuShares(i64),
    /// The cpu quota per [`CPU_PERIOD_US`]; `None`: unlimited.
    CpuQuota(Option<i64>),
    /// The memory limit in bytes; `None`: unlimited.
    MemoryLimit(Option<i64>),
    /// The most processes; `None`: unlimited.
    PidsMax(Option<i64>),
}

/// A file write: the controller whose hierarchy (v1) or presence (v2) it needs, the file, and
/// what is written.
pub(super) type FileWrite = (&'static str, &'static str, String);

impl Setting {
    /// The files that carry this setting in a hierarchy of `version`.
    pub(super) fn files(self, version: Version) -> Vec<FileWrite> {
        let max_or = |value: Option<i64>| value.map_or_else(|| "max".to_owned(), |v| v.to_string());
        match (self, version) {
            (Self::CpuShares(shares), Version::V1) => {
                vec![("cpu", "cpu.shares", shares.to_string())]
            }
            (Self::CpuShares(shares), Version::Unified) => {
                vec![("cpu", "cpu.weight", shares_to_weight(shares).to_string())]
            }
            (Self::CpuQuota(quota), Version::V1) => vec![
                ("cpu", "cpu.cfs_period_us", CPU_PERIOD_US.to_string()),
                ("cpu", "cpu.cfs_quota_us", quota.unwrap_or(-1).to_string()),
            ],
            (Self::CpuQuota(quota), Version::Unified) => {
                vec![(
                    "cpu",
                    "cpu.max",
                    format!("{} {CPU_PERIOD_US}", max_or(quota)),
                )]
            }
            (Self::MemoryLimit(bytes), Version::V1) => vec![(
                "memory",
                "memory.limit_in_bytes",
                bytes.unwrap_or(-1).to_string(),
            )],
            (Self::MemoryLimit(bytes), Version::Unified) => {
                vec![("memory", "memory.max", max_or(bytes))]
            }
            (Self::PidsMax(pids), _) => vec![("pids", "pids.max", max_or(pids))],
        }
    }
}

/// v1 shares → v2 weight, as runc converts them: [2, 262144] onto [1, 10000].
pub(super) fn shares_to_weight(shares: i64) -> i64 {
    let shares = shares.clamp(MIN_SHARES, MAX_SHARES);
    1 + ((shares - MIN_SHARES) * (MAX_WEIGHT - 1)) / (MAX_SHARES - MIN_SHARES)
}

/// v2 weight → the v1 shares it came from (rounded to the nearest, so a round trip of the
/// shares sergeant writes gives them back within the conversion's step).
pub(super) fn weight_to_shares(weight: i64) -> i64 {
    let weight = weight.clamp(1, MAX_WEIGHT);
    let step = MAX_WEIGHT - 1;
    MIN_SHARES + ((weight - 1) * (MAX_SHARES - MIN_SHARES) + step / 2) / step
}

/// What a limit file read back says, in the units of [`Setting`]: `Ok(None)` for unlimited.
///
/// # Errors
///
/// [`ParseError::BadLimit`] or [`ParseError::NoPositivePeriod`] when the text is not what
/// the kernel writes there.
pub(super) fn read_back(file: &str, text: &str) -> Result<Option<i64>, ParseError> {
    let text = text.trim();
    let number = |field: &str| {
        field.parse::<i64>().map_err(|_| ParseError::BadLimit {
            text: text.to_owned(),
        })
    };
    match file {
        "cpu.max" => {
            let mut fields = text.split_whitespace();
            let (quota, period) = (fields.next().unwrap_or_default(), fields.next());
            if quota == "max" {
                return Ok(None);
            }
            let period = period.map_or(Ok(CPU_PERIOD_US), number)?;
            if period <= 0 {
                return Err(ParseError::NoPositivePeriod {
                    text: text.to_owned(),
                });
            }
            Ok(Some(number(quota)?.saturating_mul(CPU_PERIOD_US) / period))
        }
        "cpu.weight" => number(text).map(|w| Some(weight_to_shares(w))),
        "memory.max" | "pids.max" if text == "max" => Ok(None),
        "memory.limit_in_bytes" => {
            number(text).map(|b| Some(b).filter(|b| *b < V1_UNLIMITED_MEMORY))
        }
        "cpu.cfs_quota_us" => number(text).map(|q| Some(q).filter(|q| *q > 0)),
        _ => number(text).map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_and_weights_convert_as_runc_does_and_round_trip() {
        assert_eq!(shares_to_weight(2), 1);
        assert_eq!(shares_to_weight(1024), 39);
        assert_eq!(shares_to_weight(262_144), 10_000);
        assert_eq!(shares_to_weight(0), 1, "below the minimum is the minimum");
        for shares in [2, 102, 1024, 3584, 262_144] {
            let back = weight_to_shares(shares_to_weight(shares));
            assert!((back - shares).abs() <= 27, "{shares} came back as {back}");
        }
    }

    #[test]
    fn each_version_names_its_own_files() {
        let v2 = |s: Setting| s.files(Version::Unified);
        let v1 = |s: Setting| s.files(Version::V1);
        assert_eq!(
            v2(Setting::CpuQuota(Some(50_000))),
            [("cpu", "cpu.max", "50000 100000".to_owned())]
        );
        assert_eq!(v2(Setting::CpuQuota(None))[0].2, "max 100000");
        assert_eq!(
            v2(Setting::MemoryLimit(None))[0],
            ("memory", "memory.max", "max".to_owned())
        );
        assert_eq!(v1(Setting::MemoryLimit(None))[0].2, "-1");
        assert_eq!(
            v1(Setting::CpuQuota(None))[1],
            ("cpu", "cpu.cfs_quota_us", "-1".to_owned())
        );
        assert_eq!(
            v1(Setting::PidsMax(Some(7)))[0],
            ("pids", "pids.max", "7".to_owned())
        );
        assert_eq!(
            v2(Setting::CpuShares(1024))[0],
            ("cpu", "cpu.weight", "39".to_owned())
        );
    }

    #[test]
    fn limits_read_back_in_the_settings_units() {
        assert_eq!(read_back("cpu.max", "max 100000\n"), Ok(None));
        assert_eq!(read_back("cpu.max", "25000 50000"), Ok(Some(50_000)));
        assert_eq!(read_back("memory.max", "max"), Ok(None));
        assert_eq!(
            read_back("memory.limit_in_bytes", "9223372036854771712"),
            Ok(None)
        );
        assert_eq!(read_back("cpu.cfs_quota_us", "-1"), Ok(None));
        assert_eq!(read_back("pids.max", "max\n"), Ok(None));
        assert_eq!(read_back("cpu.shares", "204"), Ok(Some(204)));
        assert_eq!(
            read_back("cpu.max", "12 0"),
            Err(ParseError::NoPositivePeriod {
                text: "12 0".to_owned()
            })
        );
        assert_eq!(
            read_back("memory.max", "lots").unwrap_err().to_string(),
            "\"lots\" is not a number"
        );
    }
}
