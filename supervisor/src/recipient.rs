//! [`ChildRecipient`]: a [`ChildRef`] narrowed to one message type, so a sender can tell a
//! supervised child without naming the child's actor type (and so without importing the
//! module that defines it).

use std::sync::Arc;

use actix::dev::ToEnvelope;
use actix::{Actor, Handler, Message};

use super::slot::{ChildRef, SendError};

/// Tells one message type to whichever incarnation of a supervised child is current.
///
/// It exists so that a child can report to its owner across the owner's restarts while the
/// two modules stay a layered pair: the owner starts the child and hands it this, the child
/// never refers to the owner's type.
pub struct ChildRecipient<M> {
    tell: Arc<dyn Fn(M) -> Result<(), SendError> + Send + Sync>,
}

impl<M> Clone for ChildRecipient<M> {
    fn clone(&self) -> Self {
        Self {
            tell: Arc::clone(&self.tell),
        }
    }
}

impl<M> std::fmt::Debug for ChildRecipient<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ChildRecipient")
    }
}

impl<M> ChildRecipient<M> {
    /// Sends `msg` without waiting, to the incarnation current now (as [`ChildRef::tell`]).
    ///
    /// # Errors
    /// [`SendError::Restarting`] or [`SendError::Down`] when no incarnation is up at this
    /// moment; nothing waits.
    pub fn tell(&self, msg: M) -> Result<(), SendError> {
        (self.tell)(msg)
    }
}

impl<A: Actor> ChildRef<A> {
    /// This reference narrowed to the messages `M`.
    #[must_use]
    pub fn recipient<M>(&self) -> ChildRecipient<M>
    where
        A: Handler<M>,
        A::Context: ToEnvelope<A, M>,
        M: Message + Send + 'static,
        M::Result: Send,
    {
        let child = self.clone();
        ChildRecipient {
            tell: Arc::new(move |msg| child.tell(msg)),
        }
    }
}
