//! Eviction signals and thresholds: the keys and values of `evictionHard`, `evictionSoft`,
//! `evictionSoftGracePeriod` and `evictionMinimumReclaim`. Parsing them here, inside
//! `Deserialize`, is what lets a bad signal or threshold be reported at its line.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::duration::Duration;
use crate::error::ParseError;
use crate::quantity::Quantity;
use crate::text::{deserialize_parsed, Scalars};

/// A resource the eviction manager watches. Only the upstream signal names are accepted, so a
/// typo cannot silently disable a threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Signal {
    /// `memory.available`
    MemoryAvailable,
    /// `nodefs.available`
    NodeFsAvailable,
    /// `nodefs.inodesFree`
    NodeFsInodesFree,
    /// `imagefs.available`
    ImageFsAvailable,
    /// `imagefs.inodesFree`
    ImageFsInodesFree,
    /// `containerfs.available`
    ContainerFsAvailable,
    /// `containerfs.inodesFree`
    ContainerFsInodesFree,
    /// `pid.available`
    PidAvailable,
    /// `allocatableMemory.available`
    AllocatableMemoryAvailable,
}

impl Signal {
    /// Every signal, in the order used for display and errors.
    pub const ALL: [Signal; 9] = [
        Signal::MemoryAvailable,
        Signal::NodeFsAvailable,
        Signal::NodeFsInodesFree,
        Signal::ImageFsAvailable,
        Signal::ImageFsInodesFree,
        Signal::ContainerFsAvailable,
        Signal::ContainerFsInodesFree,
        Signal::PidAvailable,
        Signal::AllocatableMemoryAvailable,
    ];

    /// The name used in configuration files and in the `eviction_signal` metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            Signal::MemoryAvailable => "memory.available",
            Signal::NodeFsAvailable => "nodefs.available",
            Signal::NodeFsInodesFree => "nodefs.inodesFree",
            Signal::ImageFsAvailable => "imagefs.available",
            Signal::ImageFsInodesFree => "imagefs.inodesFree",
            Signal::ContainerFsAvailable => "containerfs.available",
            Signal::ContainerFsInodesFree => "containerfs.inodesFree",
            Signal::PidAvailable => "pid.available",
            Signal::AllocatableMemoryAvailable => "allocatableMemory.available",
        }
    }
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Signal {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Self, ParseError> {
        Self::ALL
            .into_iter()
            .find(|signal| signal.as_str() == text)
            .ok_or_else(|| {
                let known: Vec<&str> = Self::ALL.iter().map(|signal| signal.as_str()).collect();
                ParseError::new(format!(
                    "unknown eviction signal \"{text}\" (known signals: {})",
                    known.join(", ")
                ))
            })
    }
}

impl Serialize for Signal {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Signal {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_parsed(
            deserializer,
            "an eviction signal name",
            Scalars::StringsOnly,
        )
    }
}

/// An eviction threshold or minimum reclaim: an absolute amount ("100Mi") or a share of the
/// resource's capacity ("10%").
#[derive(Debug, Clone, PartialEq)]
pub enum Threshold {
    /// An absolute, non-negative amount.
    Quantity(Quantity),
    /// A percentage of capacity, 0 to 100.
    Percentage(f64),
}

impl FromStr for Threshold {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Self, ParseError> {
        let not_a_threshold =
            || ParseError::new(format!("\"{text}\" is not a quantity or a percentage"));
        if let Some(number) = text.strip_suffix('%') {
            let percent: f64 = number.parse().map_err(|_| not_a_threshold())?;
            if !(0.0..=100.0).contains(&percent) {
                return Err(ParseError::new(format!(
                    "\"{text}\" is out of range: a percentage must be between 0% and 100%"
                )));
            }
            return Ok(Threshold::Percentage(percent));
        }
        let quantity: Quantity = text.parse().map_err(|_| not_a_threshold())?;
        if quantity.is_negative() {
            return Err(ParseError::new(format!(
                "\"{text}\" is negative: a threshold must be zero or more"
            )));
        }
        Ok(Threshold::Quantity(quantity))
    }
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Threshold::Quantity(quantity) => quantity.fmt(f),
            Threshold::Percentage(percent) => write!(f, "{percent}%"),
        }
    }
}

impl Serialize for Threshold {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Threshold {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_parsed(
            deserializer,
            "a quantity such as \"100Mi\" or a percentage such as \"10%\"",
            Scalars::StringsAndNumbers,
        )
    }
}

/// Thresholds (or minimum reclaims) per signal, as in `evictionHard` and `evictionSoft`.
pub type Thresholds = BTreeMap<Signal, Threshold>;

/// Grace periods per signal, as in `evictionSoftGracePeriod`.
pub type GracePeriods = BTreeMap<Signal, Duration>;

/// The upstream kubelet's default `evictionHard` on Linux.
pub fn default_eviction_hard() -> Thresholds {
    BTreeMap::from([
        (
            Signal::MemoryAvailable,
            Threshold::Quantity(Quantity::mebibytes(100)),
        ),
        (Signal::NodeFsAvailable, Threshold::Percentage(10.0)),
        (Signal::NodeFsInodesFree, Threshold::Percentage(5.0)),
        (Signal::ImageFsAvailable, Threshold::Percentage(15.0)),
    ])
}
