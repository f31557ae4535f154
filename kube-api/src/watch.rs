//! The watch of the pods bound to this node, which the API pod source and the mirror pod actor
//! both keep: kube-runtime's watcher (list, watch from the list's resource version, resume
//! after a disconnect, list again after 410 Expired), paced between failures by
//! [`RetryBackoff`] instead of the watcher's default back-off.

use std::time::Duration;

use futures::{Stream, StreamExt};
use kube::api::{ApiResource, DynamicObject};
use kube::runtime::watcher;
use kube::{Api, Client};
use sergeant_messages::pods::core::Pod;

use sergeant_core::backoff::RetryBackoff;

/// The first step between two attempts to watch again after a failure.
const RETRY_FIRST: Duration = Duration::from_millis(250);
/// The largest step: once the API server is back, the watch resumes within this long (see
/// [`RetryBackoff`] for why seconds and not upstream's 30 s).
const RETRY_MAX: Duration = Duration::from_secs(5);

/// One item of the watch: an event, or why the last attempt failed (the watch carries on).
pub type PodWatchItem = Result<watcher::Event<DynamicObject>, watcher::Error>;

/// Watches the pods whose `spec.nodeName` is `node`, in every namespace. The stream never
/// ends: a failure is yielded as an `Err` item, and the next attempt waits a
/// [`RetryBackoff`] delay (reset by the next event). A 410 Expired means the API server
/// answered but no longer has the resource version: the relist it calls for starts after the
/// first, short step, without waiting out the back-off grown while the server was away.
pub fn node_pods(client: Client, node: &str) -> impl Stream<Item = PodWatchItem> + 'static {
    let resource = ApiResource::erase::<Pod>(&());
    let api: Api<DynamicObject> = Api::all_with(client, &resource);
    let config = watcher::Config::default().fields(&format!("spec.nodeName={node}"));
    paced(
        watcher(api, config),
        RetryBackoff::new(RETRY_FIRST, RETRY_MAX),
    )
}

/// `stream`, waiting before polling it again after each `Err` item as `backoff` says. Also
/// paces the watches of config maps and secrets (`object_cache`).
pub(crate) fn paced<T: Send + 'static>(
    stream: impl Stream<Item = Result<T, watcher::Error>> + Send + 'static,
    backoff: RetryBackoff,
) -> impl Stream<Item = Result<T, watcher::Error>> + Send + 'static {
    let state = (stream.boxed(), backoff, Duration::ZERO);
    futures::stream::unfold(state, |(mut stream, mut backoff, pause)| async move {
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        let item = stream.next().await?;
        let pause = pause_after(&item, &mut backoff);
        Some((item, (stream, backoff, pause)))
    })
}

/// How long to wait after `item` before the next attempt: nothing after an event (which
/// resets the back-off), the first step after 410 Expired, the next step after any other
/// failure.
fn pause_after<T>(item: &Result<T, watcher::Error>, backoff: &mut RetryBackoff) -> Duration {
    match item {
        Ok(_) => {
            backoff.reset();
            Duration::ZERO
        }
        Err(error) => {
            if is_expired(error) {
                backoff.reset();
            }
            backoff.next_delay()
        }
    }
}

/// Whether the watch failed with 410 Expired / Gone (the resource version is too old).
fn is_expired(error: &watcher::Error) -> bool {
    match error {
        watcher::Error::WatchError(status) => status.code == 410,
        watcher::Error::InitialListFailed(kube::Error::Api(status))
        | watcher::Error::WatchStartFailed(kube::Error::Api(status))
        | watcher::Error::WatchFailed(kube::Error::Api(status)) => status.code == 410,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::Status;

    fn failure(code: u16) -> watcher::Error {
        watcher::Error::WatchError(Status::failure("failed", "Test").with_code(code).boxed())
    }

    #[test]
    fn failures_back_off_an_event_resets_and_expired_relists_at_once() {
        let mut backoff = RetryBackoff::new(Duration::from_secs(1), Duration::from_secs(8));
        let mut pause = |item: Result<(), watcher::Error>| pause_after(&item, &mut backoff);
        let secs = Duration::from_secs;
        let within = |gap: Duration, low: Duration, high: Duration| gap >= low && gap <= high;
        let first = (Duration::from_millis(500), secs(1));
        assert!(within(pause(Err(failure(500))), first.0, first.1));
        assert!(
            within(pause(Err(failure(500))), secs(1), secs(2)),
            "doubled"
        );
        assert!(within(pause(Err(failure(500))), secs(2), secs(4)), "again");
        assert_eq!(pause(Ok(())), Duration::ZERO, "an event: go on at once");
        assert!(
            within(pause(Err(failure(500))), first.0, first.1),
            "the event reset the back-off"
        );
        assert!(within(pause(Err(failure(500))), secs(1), secs(2)));
        assert!(
            within(pause(Err(failure(410))), first.0, first.1),
            "410: relist after the first step, not the grown one"
        );
    }

    #[tokio::test]
    async fn the_paced_stream_yields_every_item_and_ends_with_its_source() {
        let backoff = RetryBackoff::new(Duration::from_millis(2), Duration::from_millis(4));
        let items = vec![Ok(1), Err(failure(500)), Ok(2)];
        let seen: Vec<Option<u32>> = paced(futures::stream::iter(items), backoff)
            .map(Result::ok)
            .collect()
            .await;
        assert_eq!(seen, [Some(1), None, Some(2)]);
    }
}
