//! [`time_in_runtime`]: how long a piece of work waited on the runtime, so that what remains
//! of its wall time can be told as sergeant's own.

use std::cell::Cell;
use std::future::Future;
use std::time::Duration;

// tokio's clock (the system's, unless a test pauses it).
use tokio::time::Instant;

/// The runtime time of one [`time_in_runtime`] scope so far.
#[derive(Debug, Clone, Copy, Default)]
struct RuntimeClock {
    /// Runtime calls of the scope under way.
    in_flight: u32,
    /// When the calls under way began to overlap (the first of them started).
    busy_since: Option<Instant>,
    /// The wall time with at least one call under way, up to `busy_since`.
    busy: Duration,
}

tokio::task_local! {
    /// The clock of the current [`time_in_runtime`] scope.
    static RUNTIME_TIME: Cell<RuntimeClock>;
}

/// Marks one runtime call under way for the current [`time_in_runtime`] scope, from
/// [`InFlight::enter`] until it is dropped — whether the call finished or was abandoned.
/// Outside a scope it does nothing.
pub(super) struct InFlight;

impl InFlight {
    /// A call starts now.
    pub(super) fn enter() -> Self {
        let _ = RUNTIME_TIME.try_with(|clock| {
            let mut now = clock.get();
            if now.in_flight == 0 {
                now.busy_since = Some(Instant::now());
            }
            now.in_flight += 1;
            clock.set(now);
        });
        InFlight
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let _ = RUNTIME_TIME.try_with(|clock| {
            let mut now = clock.get();
            now.in_flight = now.in_flight.saturating_sub(1);
            if now.in_flight == 0 {
                if let Some(since) = now.busy_since.take() {
                    now.busy += since.elapsed();
                }
            }
            clock.set(now);
        });
    }
}

/// Runs `work` and returns its output with the wall time during which at least one of its
/// [`super::RuntimePort::call`]s was under way: calls made in parallel count once, so what
/// remains of its wall time is sergeant's own. The pod actor reports pod start-up overhead
/// with it.
pub async fn time_in_runtime<F: Future>(work: F) -> (F::Output, Duration) {
    RUNTIME_TIME
        .scope(Cell::new(RuntimeClock::default()), async move {
            let output = work.await;
            let clock = RUNTIME_TIME.with(Cell::get);
            let open = clock
                .busy_since
                .map_or(Duration::ZERO, |since| since.elapsed());
            (output, clock.busy + open)
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn call(took: Duration) {
        let _in_flight = InFlight::enter();
        tokio::time::sleep(took).await;
    }

    #[tokio::test(start_paused = true)]
    async fn calls_in_parallel_count_once_and_calls_in_sequence_add_up() {
        let ms = Duration::from_millis;
        let ((), parallel) = time_in_runtime(async {
            futures::join!(call(ms(30)), call(ms(50)));
        })
        .await;
        assert_eq!(parallel, ms(50));
        let ((), sequence) = time_in_runtime(async {
            call(ms(30)).await;
            tokio::time::sleep(ms(100)).await; // sergeant's own time
            call(ms(50)).await;
        })
        .await;
        assert_eq!(sequence, ms(80));
    }

    #[tokio::test(start_paused = true)]
    async fn an_abandoned_call_counts_until_it_is_dropped() {
        let ms = Duration::from_millis;
        let ((), busy) = time_in_runtime(async {
            let _ = tokio::time::timeout(ms(20), call(ms(1000))).await;
        })
        .await;
        assert_eq!(busy, ms(20));
    }

    #[tokio::test]
    async fn calls_outside_a_scope_are_not_counted_anywhere() {
        call(Duration::ZERO).await;
    }
}
