//! How a supervisor starts one child, again and again ([`ChildSpec`]): its name, a factory for
//! fresh incarnations, and the slot others reach it through. A worker is declared here; a
//! child supervisor beside its supervisor ([`ChildSpec::supervisor`] in `actor`,
//! [`ChildSpec::dynamic_supervisor`] in `dynamic`).

use std::rc::Rc;
use std::time::Duration;

use actix::{Actor, Context};
use sergeant_messages::supervision::{GetTree, Strategy};

use super::env::ChildEnv;
use super::policy::RestartPolicy;
use super::running::{inspector, spawn_actor, Running};
use super::slot::{Availability, Mark, Slot};

type StartFn = Rc<dyn Fn(ChildEnv) -> Running>;
type MarkFn = Rc<dyn Fn(Mark)>;

/// How to start one child, again and again: its name, a factory for fresh incarnations, and
/// the slot through which others reach whichever incarnation is current.
#[derive(Clone)]
pub struct ChildSpec {
    pub(crate) name: String,
    pub(crate) start: StartFn,
    pub(crate) mark: MarkFn,
    pub(crate) shutdown_timeout: Option<Duration>,
    pub(crate) strategy: Option<Strategy>,
}

impl std::fmt::Debug for ChildSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildSpec")
            .field("name", &self.name)
            .finish()
    }
}

impl ChildSpec {
    /// A worker actor made fresh by `make` at every (re)start and published to `slot`.
    pub fn worker<A, F>(name: &str, slot: &Slot<A>, make: F) -> Self
    where
        A: Actor<Context = Context<A>>,
        F: Fn(&ChildEnv) -> A + 'static,
    {
        let publish = slot.clone();
        let start: StartFn = Rc::new(move |env: ChildEnv| {
            let actor = make(&env);
            let (addr, running) = spawn_actor(actor, env.span());
            publish.publish(Availability::Up(addr));
            running
        });
        Self::starting(name, slot.marker(), start, None)
    }

    /// A child called `name` started by `start`, its availability marked through `mark`.
    fn starting(
        name: &str,
        mark: MarkFn,
        start: StartFn,
        shutdown_timeout: Option<Duration>,
    ) -> Self {
        Self {
            name: name.to_owned(),
            start,
            mark,
            shutdown_timeout,
            strategy: None,
        }
    }

    /// A supervisor made by `make` and published to `slot`, whose subtree shows in the tree
    /// (how [`ChildSpec::supervisor`] and [`ChildSpec::dynamic_supervisor`] are made).
    pub(super) fn supervising<S, F>(name: &str, slot: &Slot<S>, make: F, deadline: Duration) -> Self
    where
        S: Actor<Context = Context<S>> + actix::Handler<GetTree>,
        F: Fn(ChildEnv) -> S + 'static,
    {
        let publish = slot.clone();
        let start: StartFn = Rc::new(move |env: ChildEnv| {
            let span = env.span();
            let (addr, mut running) = spawn_actor(make(env), span);
            running.inspect = Some(inspector(addr.clone()));
            publish.publish(Availability::Up(addr));
            running
        });
        Self::starting(name, slot.marker(), start, Some(deadline))
    }

    /// Overrides the supervisor's shutdown deadline for this child.
    #[must_use]
    pub fn with_shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = Some(timeout);
        self
    }

    /// The child's name under its supervisor.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Starts a fresh incarnation with `env`.
    pub(crate) fn start(&self, env: ChildEnv) -> Running {
        (self.start)(env)
    }

    pub(crate) fn deadline(&self, policy: &RestartPolicy) -> Duration {
        self.shutdown_timeout.unwrap_or(policy.shutdown_timeout)
    }
}
