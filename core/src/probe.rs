//! A probe's kind and timing, with the upstream defaults filled in: what the pod actor's probe
//! workers run on, decided from the container's spec.

use std::fmt;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Container, Probe};

/// Which question a probe answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProbeKind {
    /// Has the application started? Gates the other two until it succeeds.
    Startup,
    /// Is it alive? A failure restarts the container.
    Liveness,
    /// Should it get traffic? Drives the Ready conditions.
    Readiness,
}

impl ProbeKind {
    /// Every kind, startup first.
    pub const ALL: [ProbeKind; 3] = [Self::Startup, Self::Liveness, Self::Readiness];

    /// The name upstream uses in metrics and messages.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Startup => "Startup",
            Self::Liveness => "Liveness",
            Self::Readiness => "Readiness",
        }
    }

    /// This kind's probe in `container`'s spec.
    #[must_use]
    pub fn of(self, container: &Container) -> Option<&Probe> {
        match self {
            Self::Startup => container.startup_probe.as_ref(),
            Self::Liveness => container.liveness_probe.as_ref(),
            Self::Readiness => container.readiness_probe.as_ref(),
        }
    }
}

impl fmt::Display for ProbeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// When and how often a probe runs, and how many results in a row change its verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeSettings {
    /// Time after the container started before the first probe.
    pub initial_delay: Duration,
    /// Time between probes.
    pub period: Duration,
    /// How long one probe may take.
    pub timeout: Duration,
    /// Successes in a row that make a failing probe pass.
    pub success_threshold: u32,
    /// Failures in a row that make a passing probe fail.
    pub failure_threshold: u32,
}

impl ProbeSettings {
    /// The settings of `probe`, with upstream's defaults (period 10 s, timeout 1 s, success
    /// threshold 1, failure threshold 3) and minimums (1 s, 1).
    #[must_use]
    pub fn of(probe: &Probe) -> Self {
        let seconds = |value: Option<i32>, default: u64, minimum: u64| {
            Duration::from_secs(
                value
                    .and_then(|v| u64::try_from(v).ok())
                    .filter(|v| *v > 0)
                    .unwrap_or(default)
                    .max(minimum),
            )
        };
        let count = |value: Option<i32>, default: u32| {
            value
                .and_then(|v| u32::try_from(v).ok())
                .filter(|v| *v > 0)
                .unwrap_or(default)
        };
        Self {
            initial_delay: seconds(probe.initial_delay_seconds, 0, 0),
            period: seconds(probe.period_seconds, 10, 1),
            timeout: seconds(probe.timeout_seconds, 1, 1),
            success_threshold: count(probe.success_threshold, 1),
            failure_threshold: count(probe.failure_threshold, 3),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_and_zero_values_get_the_upstream_defaults() {
        let settings = ProbeSettings::of(&Probe {
            timeout_seconds: Some(0),
            ..Probe::default()
        });
        assert_eq!(
            settings,
            ProbeSettings {
                initial_delay: Duration::ZERO,
                period: Duration::from_secs(10),
                timeout: Duration::from_secs(1),
                success_threshold: 1,
                failure_threshold: 3,
            }
        );
        let set = ProbeSettings::of(&Probe {
            initial_delay_seconds: Some(5),
            period_seconds: Some(2),
            timeout_seconds: Some(4),
            success_threshold: Some(2),
            failure_threshold: Some(1),
            ..Probe::default()
        });
        assert_eq!(set.initial_delay, Duration::from_secs(5));
        assert_eq!(set.period, Duration::from_secs(2));
        assert_eq!(set.timeout, Duration::from_secs(4));
        assert_eq!((set.success_threshold, set.failure_threshold), (2, 1));
    }
}
