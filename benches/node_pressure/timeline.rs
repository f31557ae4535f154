//! One scenario's episode as the benchmark saw it: its own readings of the signal (crossed,
//! recovered) and the watches' events (condition posted and cleared, pods Running and
//! Failed), with when each came; and the numbers and missing steps drawn from it.

use std::collections::BTreeSet;
use std::time::SystemTime;

use serde_json::{json, Value};

use crate::pressure::{Prepared, MI};
use crate::watch::Watches;

/// What the watches and the benchmark's readings showed of one scenario, and when.
pub struct Timeline {
    /// The greedy pod's name.
    greedy: String,
    /// When the greedy pod's creation was asked; the steps below count from then on.
    pub created: Option<SystemTime>,
    /// The Node condition's status as last printed.
    pub condition: String,
    /// The pods seen Running.
    pub running: BTreeSet<String>,
    /// The benchmark's first reading below the threshold.
    crossed: Option<SystemTime>,
    /// Its first reading back above it afterwards.
    recovered: Option<SystemTime>,
    /// The fewest bytes it read available.
    lowest: Option<u64>,
    /// The condition True on the Node, first seen.
    posted: Option<SystemTime>,
    /// The condition False again after that.
    cleared: Option<SystemTime>,
    /// The greedy pod `Failed`/`Evicted`.
    evicted: Option<SystemTime>,
    /// The first pod `Failed`: when, its name and reason.
    first_failed: Option<(SystemTime, String, String)>,
    /// Whether another pod than the greedy one failed.
    quiet_failed: bool,
}

impl Timeline {
    /// A timeline of the scenario whose greedy pod is `greedy`.
    pub fn new(greedy: &str) -> Self {
        Self {
            greedy: greedy.to_owned(),
            created: None,
            condition: String::new(),
            running: BTreeSet::new(),
            crossed: None,
            recovered: None,
            lowest: None,
            posted: None,
            cleared: None,
            evicted: None,
            first_failed: None,
            quiet_failed: false,
        }
    }

    /// Notes a reading of the signal.
    pub fn read(&mut self, prepared: &Prepared) {
        let available = prepared.available();
        let below = available < prepared.threshold_mib * MI;
        self.lowest = Some(self.lowest.map_or(available, |l| l.min(available)));
        match (self.crossed, self.recovered) {
            (None, _) if below => self.crossed = Some(SystemTime::now()),
            (Some(_), None) if !below => self.recovered = Some(SystemTime::now()),
            _ => {}
        }
    }

    /// Notes what the watches printed since the last call.
    pub fn watch(&mut self, watches: &Watches) {
        for (at, status) in watches.node.arrived() {
            if self.created.is_some() {
                match status.as_str() {
                    "True" if self.posted.is_none() => self.posted = Some(at),
                    "False" if self.posted.is_some() && self.cleared.is_none() => {
                        self.cleared = Some(at);
                    }
                    _ => {}
                }
            }
            self.condition = status;
        }
        for (at, line) in watches.pods.arrived() {
            let mut fields = line.split(' ');
            let (name, phase, reason) = (
                fields.next().unwrap_or(""),
                fields.next().unwrap_or(""),
                fields.next().unwrap_or(""),
            );
            match phase {
                "Running" => {
                    self.running.insert(name.to_owned());
                }
                "Failed" => self.failed(at, name, reason),
                _ => {}
            }
        }
    }

    /// Notes pod `name` seen `Failed` for `reason` at `at`.
    fn failed(&mut self, at: SystemTime, name: &str, reason: &str) {
        if self.first_failed.is_none() {
            self.first_failed = Some((at, name.to_owned(), reason.to_owned()));
        }
        if name == self.greedy {
            if reason == "Evicted" && self.evicted.is_none() {
                self.evicted = Some(at);
            }
        } else {
            self.quiet_failed = true;
        }
    }

    /// Whether every step of the episode was seen.
    pub fn complete(&self) -> bool {
        self.crossed.is_some()
            && self.recovered.is_some()
            && self.posted.is_some()
            && self.evicted.is_some()
            && self.cleared.is_some()
    }
}

/// Milliseconds from `from` to `to` (negative when `to` came first); `None` when either is
/// missing.
fn millis(from: Option<SystemTime>, to: Option<SystemTime>) -> Option<f64> {
    let (from, to) = (from?, to?);
    Some(match to.duration_since(from) {
        Ok(d) => d.as_secs_f64() * 1e3,
        Err(e) => -e.duration().as_secs_f64() * 1e3,
    })
}

/// The steps of the episode in `timeline` that were not seen.
pub fn missing(timeline: &Timeline, condition: &str) -> Vec<String> {
    [
        (
            timeline.crossed.is_none(),
            "the threshold crossed".to_owned(),
        ),
        (timeline.posted.is_none(), format!("{condition}=True")),
        (
            timeline.evicted.is_none(),
            "the greedy pod Failed/Evicted".to_owned(),
        ),
        (
            timeline.recovered.is_none(),
            "the signal back above the threshold".to_owned(),
        ),
        (
            timeline.cleared.is_none(),
            format!("{condition}=False again"),
        ),
    ]
    .into_iter()
    .filter_map(|(missed, step)| missed.then_some(step))
    .collect()
}

/// The numbers of the episode in `timeline`.
pub fn episode(timeline: &Timeline) -> Value {
    #[allow(clippy::cast_precision_loss)]
    let lowest = timeline.lowest.map(|l| l as f64 / MI as f64);
    let first_failed = timeline
        .first_failed
        .as_ref()
        .map(|(_, name, reason)| format!("{name} ({reason})"));
    json!({
        "created_to_crossed_ms": millis(timeline.created, timeline.crossed),
        "crossed_to_condition_ms": millis(timeline.crossed, timeline.posted),
        "crossed_to_evicted_ms": millis(timeline.crossed, timeline.evicted),
        "crossed_to_first_failed_ms": millis(timeline.crossed, timeline.first_failed.as_ref().map(|f| f.0)),
        "recovered_to_cleared_ms": millis(timeline.recovered, timeline.cleared),
        "lowest_available_mib": lowest,
        "quiet_pod_failed": u8::from(timeline.quiet_failed),
        "first_failed": first_failed,
    })
}
