//! A plain listener served on a thread of its own: the healthz port's.
//!
//! Entry point: [`serve_on_own_thread`]. Everything else of the agent shares the main loop;
//! during a burst of pod starts hundreds of tasks queue there, and an answer served from that
//! loop waits behind them (72 ms at the 99th percentile with 110 pods starting on two cores).
//! A liveness check that slow gets the agent restarted for being busy, so the healthz port
//! accepts and answers on its own loop, and its answer reads only what other threads publish
//! (see [`healthz`](super::healthz)).

use std::future::Future;
use std::net::SocketAddr;

use actix_rt::Arbiter;
use axum::Router;
use tokio::sync::oneshot;
use tracing::Instrument;

use super::listener::{self, Plain};
use super::routes::Endpoints;

/// The thread a listener is served on; dropping it stops the thread and waits for it, so the
/// port is free again for the next incarnation.
pub(super) struct OwnThread {
    arbiter: Option<Arbiter>,
}

impl Drop for OwnThread {
    fn drop(&mut self) {
        if let Some(arbiter) = self.arbiter.take() {
            arbiter.stop();
            if arbiter.join().is_err() {
                tracing::warn!("a listener's thread panicked while stopping");
            }
        }
    }
}

/// Starts a thread that binds `addr` and serves `router` (the routes of `endpoints`) over
/// plain HTTP under the bounds of every listener; returns the thread and a future that ends,
/// saying why, when the listener cannot go on (the address is taken, the thread died).
pub(super) fn serve_on_own_thread(
    addr: SocketAddr,
    endpoints: Endpoints,
    router: Router,
) -> (OwnThread, impl Future<Output = String>) {
    let arbiter = Arbiter::new();
    let (ended_tx, ended_rx) = oneshot::channel();
    let span = tracing::Span::current();
    // The socket is bound on the thread, so it is registered with that thread's loop.
    let started = arbiter.spawn_fn(move || {
        let serving = async move {
            let reason = match listener::serve(addr, endpoints, Plain, router) {
                Ok(serving) => serving.await,
                Err(refused) => refused.to_string(),
            };
            let _ = ended_tx.send(reason);
        };
        actix_rt::spawn(serving.instrument(span));
    });
    if !started {
        tracing::warn!(%addr, "the listener's thread stopped before it could serve");
    }
    let ended = async move {
        ended_rx
            .await
            .unwrap_or_else(|_| format!("{addr}: the listener's thread ended"))
    };
    (
        OwnThread {
            arbiter: Some(arbiter),
        },
        ended,
    )
}
