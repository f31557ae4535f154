//! One decision of the eviction manager per sample of the node, as upstream's synchronize
//! makes it: the thresholds met now (and those met before that their minimum reclaim has not
//! yet relieved), the pressure conditions to report (each kept for the transition period
//! after it was last observed), and — among the thresholds met for longer than their grace
//! period — the one to act on, memory first.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use super::signals::{Observation, Observations, Pressure, Resource, Signal};
use super::thresholds::Threshold;

/// What the decisions remember from one to the next.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// The thresholds acted on at the last decision: they stay met until relieved by their
    /// minimum reclaim.
    acting: Vec<Threshold>,
    /// When each threshold met now was first seen met.
    first_observed: BTreeMap<(Signal, bool), Instant>,
    /// When each pressure was last observed.
    last_observed: BTreeMap<Pressure, Instant>,
}

/// The threshold to act on, with what was observed of its signal.
#[derive(Debug, Clone, PartialEq)]
pub struct Reclaim {
    /// The threshold met past its grace period.
    pub threshold: Threshold,
    /// What was observed of its signal.
    pub observed: Observation,
    /// The resource it starves.
    pub resource: Resource,
}

/// What to report and what to do after one sample.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decision {
    /// The pressure conditions the node reports `True`.
    pub pressure: BTreeSet<Pressure>,
    /// Every threshold met now, its grace period passed or not.
    pub met: Vec<Threshold>,
    /// The threshold to reclaim for now, if any has been met past its grace period.
    pub reclaim: Option<Reclaim>,
}

/// Decides, from `observations` taken at `now`, what the node reports and which threshold
/// of `thresholds` to reclaim for; `state` carries what the previous decisions saw, and a
/// pressure is reported until `transition` has passed since it was last observed.
pub fn decide(
    thresholds: &[Threshold],
    observations: &Observations,
    state: &mut State,
    transition: Duration,
    now: Instant,
) -> Decision {
    let met_now = thresholds
        .iter()
        .filter(|t| observations.get(&t.signal).is_some_and(|o| t.met(o, false)));
    // A threshold acted on before stays until its minimum reclaim is available too; one no
    // longer configured (a reload removed it) is dropped.
    let unresolved = state.acting.iter().filter(|t| {
        thresholds.contains(t) && observations.get(&t.signal).is_some_and(|o| t.met(o, true))
    });
    let mut met: Vec<Threshold> = Vec::new();
    for threshold in met_now.chain(unresolved) {
        if !met.contains(threshold) {
            met.push(threshold.clone());
        }
    }
    state
        .first_observed
        .retain(|key, _| met.iter().any(|t| t.key() == *key));
    for threshold in &met {
        state.first_observed.entry(threshold.key()).or_insert(now);
        state
            .last_observed
            .insert(Pressure::of(threshold.signal), now);
    }
    // Observed now, or less than the transition period ago.
    state
        .last_observed
        .retain(|_, seen| *seen == now || now.saturating_duration_since(*seen) < transition);
    let pressure = state.last_observed.keys().copied().collect();
    let mut acting: Vec<Threshold> = met
        .iter()
        .filter(|t| {
            let since = state.first_observed.get(&t.key()).copied().unwrap_or(now);
            now.saturating_duration_since(since) >= t.grace.unwrap_or_default()
        })
        .cloned()
        .collect();
    // Memory first; otherwise in configuration order (hard before soft).
    acting.sort_by_key(|t| Resource::of(t.signal) != Resource::Memory);
    let reclaim = acting.first().and_then(|threshold| {
        Some(Reclaim {
            threshold: threshold.clone(),
            observed: *observations.get(&threshold.signal)?,
            resource: Resource::of(threshold.signal),
        })
    });
    state.acting = acting;
    Decision {
        pressure,
        met,
        reclaim,
    }
}
