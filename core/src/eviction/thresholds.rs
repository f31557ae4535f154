//! The thresholds of `evictionHard` and `evictionSoft` (with `evictionSoftGracePeriod` and
//! `evictionMinimumReclaim`) in the form the decision uses, and whether one is met by an
//! observation: a threshold is met while less than its quantity is available; once met and
//! acted on, it stays met until its minimum reclaim is also available again.

use std::time::Duration;

use sergeant_config::KubeletConfiguration;
use sergeant_config::Threshold as Amount;

use super::signals::{Observation, Signal};

/// One configured threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// The signal it watches.
    pub signal: Signal,
    /// How little may be available: a quantity, or a percentage of the capacity.
    pub value: Amount,
    /// How long it must hold before pods are evicted: `None` for a hard threshold.
    pub grace: Option<Duration>,
    /// How much more than `value` must be available before it counts as relieved.
    pub min_reclaim: Option<Amount>,
}

impl Threshold {
    /// Whether pods are evicted as soon as it is met (an `evictionHard` threshold).
    #[must_use]
    pub fn is_hard(&self) -> bool {
        self.grace.is_none()
    }

    /// Its quantity for a resource of `capacity`.
    #[must_use]
    pub fn quantity(&self, capacity: u64) -> u64 {
        amount(&self.value, capacity)
    }

    /// Whether `observed` meets it; with `min_reclaim`, whether it is not yet relieved by the
    /// minimum reclaim.
    #[must_use]
    pub fn met(&self, observed: &Observation, min_reclaim: bool) -> bool {
        let extra = match (&self.min_reclaim, min_reclaim) {
            (Some(reclaim), true) => amount(reclaim, observed.capacity),
            _ => 0,
        };
        self.quantity(observed.capacity).saturating_add(extra) > observed.available
    }

    /// What identifies it across decisions: its signal and whether it is hard.
    #[must_use]
    pub fn key(&self) -> (Signal, bool) {
        (self.signal, self.is_hard())
    }
}

/// An amount for a resource of `capacity`: a quantity as it is (negative ones are refused
/// by the configuration), a percentage of the capacity rounded down.
#[must_use]
pub fn amount(value: &Amount, capacity: u64) -> u64 {
    match value {
        Amount::Quantity(quantity) => u64::try_from(quantity.value()).unwrap_or(0),
        Amount::Percentage(percent) => {
            // A percentage is 0 to 100 (checked at parse): the share fits; `as` saturates.
            let share = (capacity as f64 * percent / 100.0) as u64;
            share.min(capacity)
        }
    }
}

/// The thresholds `config` sets: the hard ones, then the soft ones with their grace
/// periods, each with its signal's minimum reclaim. A soft threshold without a grace period
/// is refused by the configuration's validation, so none is dropped here.
#[must_use]
pub fn of_config(config: &KubeletConfiguration) -> Vec<Threshold> {
    let reclaim = |signal: &Signal| config.eviction_minimum_reclaim.get(signal).cloned();
    let hard = config
        .eviction_hard
        .iter()
        .map(|(signal, value)| Threshold {
            signal: *signal,
            value: value.clone(),
            grace: None,
            min_reclaim: reclaim(signal),
        });
    let soft = config.eviction_soft.iter().filter_map(|(signal, value)| {
        let grace = config.eviction_soft_grace_period.get(signal)?;
        Some(Threshold {
            signal: *signal,
            value: value.clone(),
            grace: Some(std::time::Duration::from(*grace)),
            min_reclaim: reclaim(signal),
        })
    });
    hard.chain(soft).collect()
}
