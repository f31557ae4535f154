//! The instant a summary is taken at, in the forms the stats need: nanoseconds for rates and
//! an API `Time` for the `time` fields.

use std::time::{SystemTime, UNIX_EPOCH};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

/// One reading of the wall clock.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    ns: i64,
}

impl Clock {
    /// Reads the wall clock.
    #[must_use]
    pub fn read() -> Self {
        let ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| {
                i64::try_from(since.as_nanos()).unwrap_or(i64::MAX)
            });
        Self { ns }
    }

    /// The reading in nanoseconds since the Unix epoch.
    #[must_use]
    pub fn ns(self) -> i64 {
        self.ns
    }

    /// The reading as an API time.
    #[must_use]
    pub fn time(self) -> Time {
        time_of_ns(self.ns)
    }
}

/// A CRI timestamp (nanoseconds since the Unix epoch) as an API time.
#[must_use]
pub fn time_of_ns(ns: i64) -> Time {
    Time(Timestamp::from_nanosecond(i128::from(ns)).unwrap_or(Timestamp::UNIX_EPOCH))
}
