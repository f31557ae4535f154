//! Stable addresses for supervised children.
//!
//! An actix `Addr` dies with its actor, so nobody outside a supervisor keeps one. A [`Slot`] is
//! where the supervisor publishes whichever incarnation of a child is current, and a
//! [`ChildRef`] is what everyone else holds: it sends to the current incarnation, waits for a
//! restarting child up to the delivery timeout, and otherwise fails fast with a [`SendError`].

use std::sync::Arc;
use std::time::Duration;

use actix::dev::ToEnvelope;
use actix::{Actor, Addr, Handler, Message};
use tokio::sync::watch;
use tokio::time::Instant;

/// Whether a child can take messages right now.
#[derive(Debug)]
pub enum Availability<A: Actor> {
    /// Running at this address.
    Up(Addr<A>),
    /// Between incarnations.
    Restarting,
    /// Given up or shut down; not coming back.
    Down,
}

impl<A: Actor> Clone for Availability<A> {
    fn clone(&self) -> Self {
        match self {
            Self::Up(addr) => Self::Up(addr.clone()),
            Self::Restarting => Self::Restarting,
            Self::Down => Self::Down,
        }
    }
}

/// An availability change a supervisor makes without knowing the child's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// The child died or is being restarted.
    Restarting,
    /// The child was given up or shut down.
    Down,
}

/// Why a message could not reach a supervised child.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The child was restarting and did not come back within the delivery timeout.
    #[error("{actor} is restarting and was not back within {waited:?}")]
    Restarting {
        /// The child's name.
        actor: String,
        /// How long the sender waited.
        waited: Duration,
    },
    /// The child was given up by its supervisor, or shut down.
    #[error("{actor} is down")]
    Down {
        /// The child's name.
        actor: String,
    },
    /// The child died while the message was in its mailbox or being handled.
    #[error("{actor} died before answering")]
    Died {
        /// The child's name.
        actor: String,
    },
}

/// The supervisor's side: where the current incarnation of one child is published.
#[derive(Debug)]
pub struct Slot<A: Actor> {
    name: Arc<str>,
    tx: watch::Sender<Availability<A>>,
}

impl<A: Actor> Clone for Slot<A> {
    fn clone(&self) -> Self {
        Self {
            name: Arc::clone(&self.name),
            tx: self.tx.clone(),
        }
    }
}

impl<A: Actor> Slot<A> {
    /// An empty slot for a child called `name` (used in error messages).
    #[must_use]
    pub fn new(name: &str) -> Self {
        Self {
            name: Arc::from(name),
            tx: watch::Sender::new(Availability::Restarting),
        }
    }

    /// A reference that reaches whichever incarnation is current, waiting for a restarting
    /// child at most `delivery_timeout`.
    #[must_use]
    pub fn reference(&self, delivery_timeout: Duration) -> ChildRef<A> {
        ChildRef {
            name: Arc::clone(&self.name),
            rx: self.tx.subscribe(),
            delivery_timeout,
        }
    }

    /// Whether the child is up (and where), restarting or down, right now.
    #[must_use]
    pub fn availability(&self) -> Availability<A> {
        self.tx.borrow().clone()
    }

    pub(crate) fn publish(&self, availability: Availability<A>) {
        self.tx.send_replace(availability);
    }

    pub(crate) fn marker(&self) -> std::rc::Rc<dyn Fn(Mark)>
    where
        A: 'static,
    {
        let slot = self.clone();
        std::rc::Rc::new(move |mark| {
            slot.publish(match mark {
                Mark::Restarting => Availability::Restarting,
                Mark::Down => Availability::Down,
            });
        })
    }
}

/// A sender's handle on a supervised child that survives the child's restarts.
#[derive(Debug)]
pub struct ChildRef<A: Actor> {
    name: Arc<str>,
    rx: watch::Receiver<Availability<A>>,
    delivery_timeout: Duration,
}

impl<A: Actor> Clone for ChildRef<A> {
    fn clone(&self) -> Self {
        Self {
            name: Arc::clone(&self.name),
            rx: self.rx.clone(),
            delivery_timeout: self.delivery_timeout,
        }
    }
}

impl<A: Actor> ChildRef<A> {
    /// Sends `msg` to the current incarnation and waits for its answer.
    ///
    /// # Errors
    /// [`SendError::Restarting`] when the child is between incarnations for longer than the
    /// delivery timeout, [`SendError::Down`] when it will not come back, and
    /// [`SendError::Died`] when it died before answering.
    pub async fn send<M>(&self, msg: M) -> Result<M::Result, SendError>
    where
        A: Handler<M>,
        A::Context: ToEnvelope<A, M>,
        M: Message + Send + 'static,
        M::Result: Send,
    {
        let addr = self.current().await?;
        addr.send(msg).await.map_err(|_| SendError::Died {
            actor: self.name.to_string(),
        })
    }

    /// Sends `msg` without waiting for an answer, to the incarnation current now.
    ///
    /// # Errors
    /// [`SendError::Restarting`] or [`SendError::Down`] when no incarnation is up at this
    /// moment; nothing waits.
    pub fn tell<M>(&self, msg: M) -> Result<(), SendError>
    where
        A: Handler<M>,
        A::Context: ToEnvelope<A, M>,
        M: Message + Send + 'static,
        M::Result: Send,
    {
        match &*self.rx.borrow() {
            Availability::Up(addr) if addr.connected() => {
                addr.do_send(msg);
                Ok(())
            }
            Availability::Down => Err(self.down()),
            _ => Err(SendError::Restarting {
                actor: self.name.to_string(),
                waited: Duration::ZERO,
            }),
        }
    }

    /// Waits until an incarnation is up that this reference has not seen yet (one published
    /// after the reference was made or last looked), so an owner can ask a restarted dynamic
    /// supervisor again for the children the last one had (they died with it). Called again
    /// with the same reference, it misses no restart.
    ///
    /// # Errors
    /// [`SendError::Down`] once nothing can publish an incarnation any more (the slot is gone).
    pub async fn restarted(&mut self) -> Result<(), SendError> {
        loop {
            if self.rx.changed().await.is_err() {
                return Err(self.down());
            }
            if matches!(&*self.rx.borrow_and_update(), Availability::Up(_)) {
                return Ok(());
            }
        }
    }

    /// The live address of the current incarnation, waiting out a restart up to the deadline.
    async fn current(&self) -> Result<Addr<A>, SendError> {
        let started = Instant::now();
        let deadline = started + self.delivery_timeout;
        let mut rx = self.rx.clone();
        loop {
            match &*rx.borrow_and_update() {
                Availability::Up(addr) if addr.connected() => return Ok(addr.clone()),
                Availability::Down => return Err(self.down()),
                _ => {}
            }
            match tokio::time::timeout_at(deadline, rx.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return Err(self.down()),
                Err(_) => {
                    return Err(SendError::Restarting {
                        actor: self.name.to_string(),
                        waited: started.elapsed(),
                    })
                }
            }
        }
    }

    fn down(&self) -> SendError {
        SendError::Down {
            actor: self.name.to_string(),
        }
    }
}
