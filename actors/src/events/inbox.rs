//! The recorder's end of the event queue, handed from one incarnation of the recorder to the
//! next: the queue outlives a restart (pod actors keep their senders), and an incarnation that
//! dies — even by a panic — gives the receiver back as it is dropped.

use std::cell::RefCell;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use futures::Stream;
use tokio::sync::mpsc;

use sergeant_core::events::Record;

/// The receiver of the event queue, waiting for an incarnation of the recorder to take it.
#[derive(Debug, Clone)]
pub struct Inbox(Rc<RefCell<Option<mpsc::Receiver<Record>>>>);

impl Inbox {
    pub(super) fn new(receiver: mpsc::Receiver<Record>) -> Self {
        Self(Rc::new(RefCell::new(Some(receiver))))
    }

    /// Takes the receiver for one incarnation; `None` while another holds it.
    #[must_use]
    pub fn lease(&self) -> Option<Lease> {
        let receiver = self.0.borrow_mut().take()?;
        Some(Lease {
            receiver: Some(receiver),
            home: self.clone(),
        })
    }
}

/// The receiver held by one incarnation, as a stream of records; returned on drop.
#[derive(Debug)]
pub struct Lease {
    receiver: Option<mpsc::Receiver<Record>>,
    home: Inbox,
}

impl Stream for Lease {
    type Item = Record;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Record>> {
        match self.receiver.as_mut() {
            Some(receiver) => receiver.poll_recv(cx),
            None => Poll::Ready(None),
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(receiver) = self.receiver.take() {
            *self.home.0.borrow_mut() = Some(receiver);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_lease_at_a_time_and_it_comes_back() {
        let (_tx, rx) = mpsc::channel(1);
        let inbox = Inbox::new(rx);
        let lease = inbox.lease().unwrap();
        assert!(inbox.lease().is_none());
        drop(lease);
        assert!(inbox.lease().is_some());
    }
}
