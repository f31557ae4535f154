//! `VolumeError`: why one volume of a pod could not be set up or updated.

/// Why one volume could not be made ready. It names the pod, the volume and its type, so the
/// pod's sync, the log and `sergeant_volume_setup_failures_total{type}` all tell which one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("pod {pod}: volume {volume:?} ({kind}): {reason}")]
pub struct VolumeError {
    /// `namespace/name` of the pod.
    pub pod: String,
    /// The volume's name in the pod spec.
    pub volume: String,
    /// Its type as the spec names it (`configMap`, `secret`, `emptyDir`, …).
    pub kind: &'static str,
    /// What went wrong (a missing object or key, a path that cannot be made, …).
    pub reason: String,
}

impl VolumeError {
    /// Counts the failure in `sergeant_volume_setup_failures_total{type}`.
    pub fn record(&self) {
        metrics::counter!("sergeant_volume_setup_failures_total", "type" => self.kind).increment(1);
    }
}
