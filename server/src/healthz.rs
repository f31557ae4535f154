//! `/healthz`: whether the node agent is alive, answered without a message to any actor.
//!
//! Entry point: [`healthz`]. It reads what the supervisors publish ([`TreeHealth`]) and the
//! PLEG's last relist, so it answers in the same time however busy the main loop is; a main
//! loop that stops running is told by its missed heartbeats, as upstream tells a stuck sync
//! loop.

use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::ServerDeps;

/// PLEG is unhealthy when it has not completed a relist for this long (upstream's threshold).
const PLEG_STALL: Duration = Duration::from_secs(180);

/// The shortest time without a heartbeat of the main loop that counts as a stall (upstream's
/// floor for its sync loop).
const LOOP_STALL_FLOOR: Duration = Duration::from_secs(300);

/// How long the main loop may go without a heartbeat before the agent is unhealthy: twice the
/// sync frequency, at least five minutes, as upstream's sync-loop check.
fn loop_stall_limit(sync_frequency: Duration) -> Duration {
    sync_frequency.saturating_mul(2).max(LOOP_STALL_FLOOR)
}

/// Answers 200 `ok`, or 500 naming every reason the agent is degraded: the deepest children
/// of the static tree that are not running, a PLEG that stopped relisting, a main loop that
/// stopped running.
pub(super) async fn healthz(State(deps): State<ServerDeps>) -> Response {
    let mut degraded = deps.health.degraded();
    if let Some(last) = *deps.pleg.borrow() {
        if last.elapsed() > PLEG_STALL {
            degraded.push(format!(
                "pleg was last seen active {:?} ago; threshold is {PLEG_STALL:?}",
                last.elapsed()
            ));
        }
    }
    let limit = loop_stall_limit(deps.config.borrow().active.kubelet.sync_frequency.into());
    let silent = deps.health.since_last_beat();
    if silent > limit {
        degraded.push(format!(
            "the main loop last ran {silent:?} ago; threshold is {limit:?}"
        ));
    }
    if degraded.is_empty() {
        (StatusCode::OK, "ok").into_response()
    } else {
        let body = format!("degraded: {}\n", degraded.join("; "));
        (StatusCode::INTERNAL_SERVER_ERROR, body).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loop_stall_limit_is_twice_the_sync_frequency_but_never_under_five_minutes() {
        assert_eq!(loop_stall_limit(Duration::from_secs(60)), LOOP_STALL_FLOOR);
        assert_eq!(loop_stall_limit(Duration::from_secs(10)), LOOP_STALL_FLOOR);
        assert_eq!(
            loop_stall_limit(Duration::from_secs(200)),
            Duration::from_secs(400)
        );
        assert_eq!(loop_stall_limit(Duration::MAX), Duration::MAX);
    }
}
