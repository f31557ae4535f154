//! The container event subscribers of a fake adapter, and the fan-out of each event to them.

use sergeant_messages::container_events::{ContainerEventItem, ContainerEventStream, BUFFER};
use sergeant_messages::runtime::cri;
use tokio::sync::mpsc;

/// The open subscriptions of one fake adapter.
#[derive(Debug, Default)]
pub(super) struct Subscribers {
    open: Vec<mpsc::Sender<ContainerEventItem>>,
}

impl Subscribers {
    /// A new subscription.
    pub(super) fn add(&mut self) -> ContainerEventStream {
        let (events, stream) = mpsc::channel(BUFFER);
        self.open.push(events);
        stream
    }

    /// True when nobody subscribes (any more).
    pub(super) fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// Hands `events` to every subscriber, in order. A subscriber that has gone, or whose
    /// buffer is full, is dropped: its stream closes without an error, and it subscribes
    /// again and relists, which loses nothing (an actor cannot wait for a slow reader).
    pub(super) fn publish(&mut self, events: Vec<cri::ContainerEventResponse>) {
        for event in events {
            self.open
                .retain(|subscriber| subscriber.try_send(Ok(event.clone())).is_ok());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(id: &str) -> cri::ContainerEventResponse {
        cri::ContainerEventResponse {
            container_id: id.to_owned(),
            ..Default::default()
        }
    }

    #[test]
    fn every_subscriber_gets_every_event_and_a_slow_one_is_dropped() {
        let mut subscribers = Subscribers::default();
        let mut fast = subscribers.add();
        let mut slow = subscribers.add();
        subscribers.publish(vec![event("a"), event("b")]);
        for stream in [&mut fast, &mut slow] {
            let ids: Vec<String> = (0..2)
                .map(|_| stream.try_recv().expect("event").expect("ok").container_id)
                .collect();
            assert_eq!(ids, ["a", "b"]);
        }
        let flood = (0..BUFFER).map(|n| event(&n.to_string())).collect();
        subscribers.publish(flood);
        while fast.try_recv().is_ok() {}
        subscribers.publish(vec![event("after")]);
        assert_eq!(subscribers.open.len(), 1, "the full subscriber is dropped");
        assert_eq!(
            fast.try_recv().expect("event").expect("ok").container_id,
            "after"
        );
        while slow.try_recv().is_ok() {}
        assert!(
            matches!(
                slow.try_recv(),
                Err(mpsc::error::TryRecvError::Disconnected)
            ),
            "the dropped stream ends"
        );
        drop(fast);
        subscribers.publish(vec![event("nobody")]);
        assert!(subscribers.is_empty());
    }
}
