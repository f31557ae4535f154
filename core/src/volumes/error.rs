//! `VolumeError`: why one volume of a pod could not be set up or updated.

/// Why one volume could not be made ready. It names the pod, the volume and its type, so the
/// pod's sync, the log, the pod's `FailedMount` event and
/// `sergeant_volume_setup_failures_total{type}` (both the pod actor's) all tell which one.
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
    /// The `FailedMount` event's message, in upstream's shape:
    /// `MountVolume.SetUp failed for volume "cfg" : configmap "cm" not found`.
    #[must_use]
    pub fn event_message(&self) -> String {
        format!(
            "MountVolume.SetUp failed for volume {:?} : {}",
            self.volume, self.reason
        )
    }
}
