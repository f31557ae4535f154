//! [`FakeRuntime`]: the whole state of the fake runtime, and its clock.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use super::container::Container;
use super::events::EventLog;
use super::ids::IdSource;
use super::images::ImageStore;
use super::ipam::IpPool;
use super::sandboxes::Sandbox;

/// An in-memory container runtime with CRI semantics: sandboxes, containers and images that
/// exist only as records, with no process, I/O, task or timer behind them.
///
/// It answers one runtime-port request at a time through [`FakeRuntime::call`]; the
/// [`FakeAdapter`](super::FakeAdapter) actor owns one and serves it to the kubelet.
#[derive(Debug)]
pub struct FakeRuntime {
    pub(super) sandboxes: BTreeMap<String, Sandbox>,
    pub(super) containers: BTreeMap<String, Container>,
    pub(super) images: ImageStore,
    pub(super) ips: IpPool,
    pub(super) ids: IdSource,
    pub(super) clock: Clock,
    pub(super) events: EventLog,
}

impl Default for FakeRuntime {
    fn default() -> Self {
        Self::new()
    }
}

impl FakeRuntime {
    /// An empty runtime: no sandboxes, no containers, no images; every pull succeeds.
    #[must_use]
    pub fn new() -> Self {
        let mut clock = Clock::default();
        let seed = clock.now_ns().unsigned_abs();
        Self {
            sandboxes: BTreeMap::new(),
            containers: BTreeMap::new(),
            images: ImageStore::default(),
            ips: IpPool::default(),
            ids: IdSource::seeded(seed),
            clock,
            events: EventLog::default(),
        }
    }

    /// Makes every pull of an image whose reference starts with `prefix` (as written, or in
    /// its normalized form such as `docker.io/library/nginx:latest`) fail with
    /// `RuntimeError::NotFound` naming the image, as a registry without that image would.
    /// May be given several times; a pull fails when any prefix matches.
    #[must_use]
    pub fn fail_pulls_matching(mut self, prefix: impl Into<String>) -> Self {
        self.images.add_missing_prefix(prefix.into());
        self
    }
}

/// Wall-clock time in nanoseconds since the Unix epoch, strictly increasing across readings so
/// that a container's created, started and finished times are always ordered.
#[derive(Debug, Default)]
pub(super) struct Clock {
    last: i64,
}

impl Clock {
    /// The current time, later than every earlier reading.
    pub(super) fn now_ns(&mut self) -> i64 {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| {
                i64::try_from(since.as_nanos()).unwrap_or(i64::MAX)
            });
        self.last = wall.max(self.last.saturating_add(1));
        self.last
    }
}
