//! The prober metrics under upstream's names and labels, served on `/metrics` and
//! `/metrics/probes`.

use std::time::Duration;

use sergeant_messages::pods::PodKey;

use sergeant_core::probe::ProbeKind;
use sergeant_probes::Outcome;

/// Counter of probe attempts by `probe_type`, `result`, `container`, `pod`, `namespace`,
/// `pod_uid`.
pub const PROBE_TOTAL: &str = "prober_probe_total";
/// Histogram of probe durations in seconds by `probe_type`, `container`, `pod`, `namespace`.
pub const PROBE_DURATION: &str = "prober_probe_duration_seconds";

/// Records one attempt of `kind` on `container` of `pod`.
pub fn record(kind: ProbeKind, pod: &PodKey, container: &str, outcome: &Outcome, took: Duration) {
    metrics::counter!(
        PROBE_TOTAL,
        "probe_type" => kind.name(),
        "result" => outcome.label(),
        "container" => container.to_owned(),
        "pod" => pod.name.clone(),
        "namespace" => pod.namespace.clone(),
        "pod_uid" => pod.uid.clone(),
    )
    .increment(1);
    metrics::histogram!(
        PROBE_DURATION,
        "probe_type" => kind.name(),
        "container" => container.to_owned(),
        "pod" => pod.name.clone(),
        "namespace" => pod.namespace.clone(),
    )
    .record(took.as_secs_f64());
}
