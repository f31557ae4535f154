//! The supervision metrics: `sergeant_actor_restarts_total{actor}` and `sergeant_actor_up{actor}`.

/// Describes the supervision metrics to the installed recorder, so `/metrics` carries HELP text.
pub fn describe() {
    metrics::describe_counter!(
        "sergeant_actor_restarts_total",
        "Restarts of a supervised actor by its supervisor, by actor path."
    );
    metrics::describe_gauge!(
        "sergeant_actor_up",
        "1 while a supervised actor is running, 0 while it is down or restarting."
    );
}

pub(crate) fn set_up(actor: &str, up: bool) {
    metrics::gauge!("sergeant_actor_up", "actor" => actor.to_owned()).set(if up {
        1.0
    } else {
        0.0
    });
}

pub(crate) fn count_restart(actor: &str) {
    metrics::counter!("sergeant_actor_restarts_total", "actor" => actor.to_owned()).increment(1);
}
