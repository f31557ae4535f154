//! The stand-in for a managed-mode role of the tree in standalone mode, which has no API
//! server: [`Pending::standalone`].
//!
//! It holds the role's place under the right supervisor, says plainly on
//! `/debug/supervision` that it has nothing to do, and carries the role's failpoint
//! (`<role>::heartbeat`) so supervision can be exercised at every position of the tree. It
//! does no kubelet work and claims none.

use std::time::Duration;

use actix::{Actor, AsyncContext, Context};

use sergeant_supervisor::failpoint;
use sergeant_supervisor::ChildEnv;

/// How often a pending role evaluates its failpoint.
const HEARTBEAT: Duration = Duration::from_millis(250);

/// A role with nothing to do here.
pub struct Pending {
    env: ChildEnv,
    failpoint: String,
    status: String,
}

impl Pending {
    /// A stand-in for a managed-mode `role` in standalone mode, which has no API server.
    #[must_use]
    pub fn standalone(env: &ChildEnv, role: &str) -> Self {
        Self::saying(env, role, "standalone: no API server".to_owned())
    }

    fn saying(env: &ChildEnv, role: &str, status: String) -> Self {
        Self {
            env: env.clone(),
            failpoint: format!("{role}::heartbeat"),
            status,
        }
    }
}

impl Actor for Pending {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.env.set_status(self.status.clone());
        ctx.run_interval(HEARTBEAT, |act, ctx| {
            if let Err(fault) = failpoint::check(&act.failpoint) {
                act.env.fail(ctx, fault);
            }
        });
    }
}
