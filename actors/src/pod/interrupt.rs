//! The signal that stops a pod's sync part-way: the pod actor owns an [`Interrupter`] and
//! raises it once it decides to stop the pod (terminate it, or stop it past its deadline); the
//! sync it runs holds an [`Interrupt`] and checks it between runtime actions, so nothing is
//! created or started for a pod being stopped, and a long wait (an image pull) is abandoned.
//! One actor's signal to its own sync: a watch channel, no state shared between actors.
//!
//! Entry point: [`Interrupter::new`].

use std::future::Future;

use tokio::sync::watch;

/// The pod actor's end: raised once, never lowered (a pod being stopped stays so).
#[derive(Debug)]
pub struct Interrupter(watch::Sender<bool>);

/// A sync's end: whether the pod actor has decided to stop the pod.
#[derive(Debug, Clone)]
pub struct Interrupt(watch::Receiver<bool>);

/// The sync stopped because the pod is being stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("interrupted: the pod is being stopped")]
pub struct Interrupted;

impl Interrupter {
    /// A signal not raised yet.
    #[must_use]
    pub fn new() -> Self {
        Self(watch::Sender::new(false))
    }

    /// Tells every sync holding an [`Interrupt`] of this signal to stop at its next check.
    pub fn raise(&self) {
        self.0.send_replace(true);
    }

    /// The end a sync checks.
    #[must_use]
    pub fn interrupt(&self) -> Interrupt {
        Interrupt(self.0.subscribe())
    }
}

impl Default for Interrupter {
    fn default() -> Self {
        Self::new()
    }
}

impl Interrupt {
    /// Checks between two actions.
    ///
    /// # Errors
    /// [`Interrupted`] once the signal was raised.
    pub fn check(&self) -> Result<(), Interrupted> {
        if *self.0.borrow() {
            Err(Interrupted)
        } else {
            Ok(())
        }
    }

    /// Runs `work` unless the signal is raised first; raised meanwhile, `work` is dropped
    /// (what it asked of the runtime may still finish there, but its result is not used).
    ///
    /// # Errors
    /// [`Interrupted`] when the signal was raised before `work` finished.
    pub async fn unless<F: Future>(&self, work: F) -> Result<F::Output, Interrupted> {
        self.check()?;
        let mut raised = self.0.clone();
        tokio::select! {
            biased;
            done = work => Ok(done),
            // A closed channel (the pod actor gone) is no reason to stop: wait for the work.
            Ok(_) = raised.wait_for(|raised| *raised) => Err(Interrupted),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_check_fails_only_once_the_signal_is_raised() {
        let switch = Interrupter::new();
        let interrupt = switch.interrupt();
        assert_eq!(interrupt.check(), Ok(()));
        switch.raise();
        assert_eq!(interrupt.check(), Err(Interrupted));
        assert_eq!(switch.interrupt().check(), Err(Interrupted));
    }

    #[tokio::test]
    async fn a_wait_is_abandoned_when_the_signal_is_raised() {
        let switch = Interrupter::new();
        let interrupt = switch.interrupt();
        let waiting = interrupt.unless(tokio::time::sleep(Duration::from_secs(3600)));
        let raise = async {
            tokio::task::yield_now().await;
            switch.raise();
        };
        let (result, ()) = tokio::join!(waiting, raise);
        assert_eq!(result, Err(Interrupted));
    }

    #[tokio::test]
    async fn work_finishes_when_nothing_is_raised_even_after_the_actor_is_gone() {
        let switch = Interrupter::new();
        let interrupt = switch.interrupt();
        drop(switch);
        assert_eq!(interrupt.unless(async { 7 }).await, Ok(7));
    }

    #[tokio::test]
    async fn nothing_starts_once_raised() {
        let switch = Interrupter::new();
        switch.raise();
        let started = std::cell::Cell::new(false);
        let result = switch.interrupt().unless(async { started.set(true) }).await;
        assert_eq!(result, Err(Interrupted));
        assert!(!started.get());
    }
}
