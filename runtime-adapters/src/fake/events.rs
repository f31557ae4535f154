//! The container events of the fake runtime, shaped as containerd's CRI server emits them: a
//! created, started, stopped or deleted event for each container and sandbox that changes,
//! carrying the status of its pod sandbox and of the sandbox's containers.
//!
//! Events are only recorded while somebody subscribes (see [`super::subscribers`]), so a
//! hollow node without an evented PLEG pays nothing for them.

use sergeant_messages::runtime::cri;

use super::FakeRuntime;

pub(super) use cri::ContainerEventType as Kind;

/// The events recorded since they were last taken.
#[derive(Debug, Default)]
pub(super) struct EventLog {
    recording: bool,
    pending: Vec<cri::ContainerEventResponse>,
}

impl FakeRuntime {
    /// Starts or stops recording events; stopping drops those not taken yet.
    pub(super) fn record_events(&mut self, recording: bool) {
        self.events.recording = recording;
        if !recording {
            self.events.pending.clear();
        }
    }

    /// The events recorded since the last call, oldest first.
    pub(super) fn take_events(&mut self) -> Vec<cri::ContainerEventResponse> {
        std::mem::take(&mut self.events.pending)
    }

    /// Records that the container or sandbox `id` of sandbox `sandbox_id` went through `kind`,
    /// with the sandbox's status as it is now. A sandbox's own events name it in both.
    pub(super) fn emit(&mut self, kind: Kind, id: &str, sandbox_id: &str) {
        if !self.events.recording {
            return;
        }
        let pod_sandbox_status = self
            .sandboxes
            .get(sandbox_id)
            .map(|sandbox| sandbox.status(sandbox_id));
        let containers_statuses = self
            .containers
            .iter()
            .filter(|(_, container)| container.sandbox_id == sandbox_id)
            .map(|(id, container)| container.status(id))
            .collect();
        let event = cri::ContainerEventResponse {
            container_id: id.to_owned(),
            container_event_type: kind as i32,
            created_at: self.clock.now_ns(),
            pod_sandbox_status,
            containers_statuses,
        };
        self.events.pending.push(event);
    }
}

#[cfg(test)]
mod tests {
    use sergeant_messages::runtime::RuntimeRequest;

    use super::*;

    fn sandbox_request() -> RuntimeRequest {
        RuntimeRequest::RunPodSandbox(cri::RunPodSandboxRequest {
            config: Some(cri::PodSandboxConfig {
                metadata: Some(cri::PodSandboxMetadata {
                    name: "p".into(),
                    namespace: "ns".into(),
                    uid: "uid-p".into(),
                    attempt: 0,
                }),
                ..Default::default()
            }),
            ..Default::default()
        })
    }

    #[test]
    fn nothing_is_recorded_until_asked_and_taking_empties_the_log() {
        let mut runtime = FakeRuntime::new();
        runtime.call(sandbox_request()).expect("sandbox");
        assert!(runtime.take_events().is_empty(), "not recording yet");
        runtime.record_events(true);
        runtime
            .call(sandbox_request())
            .expect_err("same name twice");
        assert!(
            runtime.take_events().is_empty(),
            "a refused call changes nothing"
        );
        let mut second = sandbox_request();
        if let RuntimeRequest::RunPodSandbox(request) = &mut second {
            if let Some(metadata) = request.config.as_mut().and_then(|c| c.metadata.as_mut()) {
                metadata.attempt = 1;
            }
        }
        runtime.call(second).expect("second sandbox");
        let events = runtime.take_events();
        let kinds: Vec<i32> = events.iter().map(|e| e.container_event_type).collect();
        assert_eq!(
            kinds,
            [
                Kind::ContainerCreatedEvent as i32,
                Kind::ContainerStartedEvent as i32
            ]
        );
        let status = events[1].pod_sandbox_status.as_ref().expect("status");
        assert_eq!(status.id, events[1].container_id);
        assert_eq!(
            status.metadata.as_ref().map(|m| m.uid.as_str()),
            Some("uid-p")
        );
        assert!(events[0].created_at < events[1].created_at);
        assert!(runtime.take_events().is_empty());
        runtime.record_events(false);
        runtime.call(sandbox_request()).expect_err("same name");
        assert!(runtime.take_events().is_empty());
    }
}
