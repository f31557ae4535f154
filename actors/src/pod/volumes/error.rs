//! `VolumeError`: why one volume of a pod could not be set up or updated.

use crate::events::{pod_event, reason, EventType};

/// Why one volume could not be made ready. It names the pod, the volume and its type, so the
/// pod's sync, the log, the pod's `FailedMount` event and
/// `sergeant_volume_setup_failures_total{type}` all tell which one.
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
    /// Counts the failure in `sergeant_volume_setup_failures_total{type}` and reports it as
    /// upstream's Warning `FailedMount` event on the pod whose work is running (repeats are
    /// counted and rate-limited by the event recorder).
    pub fn record(&self) {
        metrics::counter!("sergeant_volume_setup_failures_total", "type" => self.kind).increment(1);
        pod_event(
            EventType::Warning,
            reason::FAILED_MOUNT,
            self.event_message(),
        );
    }

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

#[cfg(test)]
mod tests {
    use super::*;
    use sergeant_messages::pods::core::Pod;

    #[tokio::test]
    async fn a_failure_is_a_failed_mount_event_on_its_pod() {
        let failure = VolumeError {
            pod: "default/web".to_owned(),
            volume: "cfg".to_owned(),
            kind: "configMap",
            reason: "configmap \"late\" not found".to_owned(),
        };
        let (sink, inbox) = crate::events::channel();
        let mut lease = inbox.lease().expect("the inbox");
        let mut pod = Pod::default();
        pod.metadata.name = Some("web".to_owned());
        sink.for_pod(&pod).scope(async { failure.record() }).await;
        let event = futures::StreamExt::next(&mut lease)
            .await
            .expect("an event");
        assert_eq!(
            (event.kind, event.reason, event.object.field_path),
            (EventType::Warning, "FailedMount", None)
        );
        assert_eq!(
            event.message,
            "MountVolume.SetUp failed for volume \"cfg\" : configmap \"late\" not found"
        );
    }
}
