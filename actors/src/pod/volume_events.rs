//! What the pod actor tells the operator about a pod's volumes that could not be made ready:
//! a volume failure as upstream's Warning `FailedMount` event and
//! `sergeant_volume_setup_failures_total{type}`, a refused subPath in the log and
//! `sergeant_subpath_failures_total{reason}`.

use sergeant_core::volumes::{SubPathError, VolumeError};

use crate::events::{pod_event, reason, EventType};

/// Counts the volume failure and reports it as a `FailedMount` event on the pod whose work is
/// running (repeats are counted and rate-limited by the event recorder).
pub fn record_volume_failure(failure: &VolumeError) {
    metrics::counter!("sergeant_volume_setup_failures_total", "type" => failure.kind).increment(1);
    pod_event(
        EventType::Warning,
        reason::FAILED_MOUNT,
        failure.event_message(),
    );
}

/// Logs the refused subPath with its fields and counts it.
pub fn record_subpath_refusal(refused: &SubPathError) {
    tracing::warn!(
        field = refused.field,
        sub_path = refused.given,
        reason = refused.reason.label(),
        "subPath refused: {refused}"
    );
    metrics::counter!("sergeant_subpath_failures_total", "reason" => refused.reason.label())
        .increment(1);
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
        sink.for_pod(&pod)
            .scope(async { record_volume_failure(&failure) })
            .await;
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
