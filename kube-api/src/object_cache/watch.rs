//! The `Watch` strategy's moving part: one watch per object in use, a list and watch with the
//! field selector `metadata.name=<name>` (the Node authorizer lets a node list and watch an
//! object of its pods only by name), kept by kube-runtime's watcher, listed again after each
//! failure once the agent's one API back-off allows. What it sees is published whole in a
//! `tokio::sync::watch` channel the reads look at; a watch that fails keeps the last object it
//! saw and says why it fails, so a read can ask the API server itself. An object marked
//! `immutable` cannot change any more: its watch ends once it has seen it, and the reads go on
//! answering from what it saw, as upstream.

use std::fmt::Debug;
use std::time::Duration;

use futures::StreamExt;
use kube::runtime::watcher::{self, watcher, Event};
use kube::Api;
use serde::de::DeserializeOwned;
use tokio::sync::watch;

use super::Fetched;
use sergeant_core::backoff::RetryBackoff;

/// The first step between two attempts after a failure, as the pod watch's.
const RETRY_FIRST: Duration = Duration::from_millis(250);
/// The largest step (see [`RetryBackoff`]).
const RETRY_MAX: Duration = Duration::from_secs(5);
/// Watches running, by kind (`configmap`, `secret`): a watch ends when the last pod using its
/// object goes, or once its object is immutable.
pub const WATCHES_METRIC: &str = "sergeant_object_watches";

/// What one watch has seen of its object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Seen {
    /// The object as of the last complete list or event (`Some(None)`: it does not exist);
    /// `None` until the first list is answered.
    pub(super) object: Option<Option<Fetched>>,
    /// Why the watch's last attempt failed, until one succeeds again.
    pub(super) failing: Option<String>,
}

/// What a read makes of what its object's watch has seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Answer {
    /// The watch is current: answer with what it saw.
    Stored(Option<Fetched>),
    /// The first list is not answered yet: wait for it, within a bound.
    Wait,
    /// The watch is failing: ask the API server, and answer with `stale` (what the watch saw
    /// last, if anything) only when that fails too.
    Get {
        /// What the watch saw before it failed.
        stale: Option<Option<Fetched>>,
    },
}

/// The answer a read gets from `seen`.
pub(super) fn answer(seen: &Seen) -> Answer {
    match (&seen.failing, &seen.object) {
        (None, Some(object)) => Answer::Stored(object.clone()),
        (None, None) => Answer::Wait,
        (Some(_), stale) => Answer::Get {
            stale: stale.clone(),
        },
    }
}

/// Follows the object `name` of `api` until its object is immutable (or the task is
/// aborted: the last pod using it went), publishing each change in `seen`.
pub(super) async fn follow<K>(
    api: Api<K>,
    kind: &'static str,
    name: String,
    convert: fn(K) -> Fetched,
    seen: watch::Sender<Seen>,
) where
    K: kube::Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    let _running = Running::new(kind);
    let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
    let mut backoff = RetryBackoff::new(RETRY_FIRST, RETRY_MAX);
    loop {
        // Each attempt lists first, as upstream's reflector after a failure: the watch is
        // current again (and reads stop asking the API server) once a list is in.
        let mut stream = std::pin::pin!(watcher(api.clone(), config.clone()));
        // The object of the list under way: it replaces what was seen only once complete.
        let mut listed = None;
        while let Some(item) = stream.next().await {
            let object = match item {
                Err(error) => {
                    tracing::debug!("watch of {kind} {name} failed: {error}");
                    seen.send_modify(|seen| seen.failing = Some(error.to_string()));
                    break;
                }
                Ok(Event::Init) => {
                    listed = None;
                    continue;
                }
                Ok(Event::InitApply(object)) => {
                    listed = Some(convert(object));
                    continue;
                }
                Ok(Event::InitDone) => listed.take(),
                Ok(Event::Apply(object)) => Some(convert(object)),
                Ok(Event::Delete(_)) => None,
            };
            backoff.reset();
            let immutable = object.as_ref().is_some_and(|object| object.immutable);
            seen.send_replace(Seen {
                object: Some(object),
                failing: None,
            });
            if immutable {
                tracing::debug!("{kind} {name} is immutable: no longer watched");
                return;
            }
        }
        tokio::time::sleep(backoff.next_delay()).await;
    }
}

/// Counts a running watch in [`WATCHES_METRIC`] for as long as it lives.
struct Running {
    kind: &'static str,
}

impl Running {
    fn new(kind: &'static str) -> Self {
        metrics::gauge!(WATCHES_METRIC, "kind" => kind).increment(1.0);
        Self { kind }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        metrics::gauge!(WATCHES_METRIC, "kind" => self.kind).decrement(1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: &str) -> Fetched {
        Fetched {
            data: [("key".to_owned(), value.as_bytes().to_vec())].into(),
            secret_type: None,
            immutable: false,
        }
    }

    #[test]
    fn a_current_watch_answers_and_a_new_one_is_waited_for() {
        assert_eq!(answer(&Seen::default()), Answer::Wait);
        let current = Seen {
            object: Some(Some(object("a"))),
            failing: None,
        };
        assert_eq!(answer(&current), Answer::Stored(Some(object("a"))));
        let absent = Seen {
            object: Some(None),
            failing: None,
        };
        assert_eq!(answer(&absent), Answer::Stored(None), "known not to exist");
    }

    #[test]
    fn a_failing_watch_sends_reads_to_the_api_server_with_what_it_saw_last() {
        let failing = Seen {
            object: Some(Some(object("a"))),
            failing: Some("connection refused".to_owned()),
        };
        assert_eq!(
            answer(&failing),
            Answer::Get {
                stale: Some(Some(object("a")))
            }
        );
        let never_listed = Seen {
            object: None,
            failing: Some("forbidden".to_owned()),
        };
        assert_eq!(answer(&never_listed), Answer::Get { stale: None });
    }
}
