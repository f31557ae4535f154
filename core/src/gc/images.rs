//! Image garbage collection, decided: which unused images one pass removes, as upstream's image
//! GC manager (`imageGCHighThresholdPercent`, `imageGCLowThresholdPercent`,
//! `imageMinimumGCAge`, `imageMaximumGCAge`). Entry points: [`Records::detect`], which keeps
//! what the runtime does not (when an image was first seen and last used), and [`plan`].
//!
//! Never removed: an image any container (running or not) uses, the runtime's sandbox image,
//! an image the runtime pins, an image first seen less than the minimum age ago.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use k8s_cri::v1 as cri;
use sergeant_config::KubeletConfiguration;

/// The thresholds and ages a pass applies, from the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// Usage of the image filesystem, in percent, at or above which images are removed.
    pub high_percent: u64,
    /// Usage, in percent, that removal aims to bring the image filesystem down to.
    pub low_percent: u64,
    /// An image first seen less than this long ago is never removed.
    pub min_age: Duration,
    /// An unused image not used for longer than this is removed whatever the usage; `None`:
    /// never.
    pub max_age: Option<Duration>,
}

impl Policy {
    /// The policy of `config`; thresholds out of range (refused at load) read as 100.
    #[must_use]
    pub fn of(config: &KubeletConfiguration) -> Self {
        let percent = |value: i32| u64::try_from(value).map_or(100, |v| v.min(100));
        Self {
            high_percent: percent(config.image_gc_high_threshold_percent),
            low_percent: percent(config.image_gc_low_threshold_percent),
            min_age: config.image_minimum_gc_age.as_std(),
            max_age: Some(config.image_maximum_gc_age.as_std()).filter(|age| !age.is_zero()),
        }
    }

    /// Whether image GC runs at all: upstream turns it off when the high threshold is 100 and
    /// there is no maximum age.
    #[must_use]
    pub fn enabled(&self) -> bool {
        self.high_percent < 100 || self.max_age.is_some()
    }
}

/// What is known of one image beyond the runtime's listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// When a detection first listed it.
    pub first_detected: Instant,
    /// When a detection last saw a container use it; `None`: never seen in use.
    pub last_used: Option<Instant>,
    /// Its size as the runtime reports it, in bytes.
    pub size: u64,
    /// Whether the runtime pins it (never removed).
    pub pinned: bool,
    /// Its tags and digests, to match the names containers and the sandbox image use.
    pub names: Vec<String>,
}

impl Record {
    /// The name to show in logs and events: the first tag, else the first digest, else `id`.
    #[must_use]
    pub fn shown<'a>(&'a self, id: &'a str) -> &'a str {
        self.names.first().map_or(id, String::as_str)
    }
}

/// The images a container or the runtime itself holds on to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Holders {
    /// The image references of every container (its image id, and the name it was created
    /// from).
    pub containers: BTreeSet<String>,
    /// The runtime's sandbox (pause) image, when it says which.
    pub sandbox_image: Option<String>,
}

impl Holders {
    /// The holders of images among `containers`, with the runtime's `sandbox_image`.
    #[must_use]
    pub fn of(containers: &[cri::Container], sandbox_image: Option<String>) -> Self {
        let containers = containers
            .iter()
            .flat_map(|c| {
                let spec = c.image.as_ref().map(|i| i.image.clone());
                std::iter::once(c.image_ref.clone()).chain(spec)
            })
            .filter(|name| !name.is_empty())
            .collect();
        Self {
            containers,
            sandbox_image,
        }
    }

    /// Every name image `id` goes by: its id, tags and digests.
    fn names<'a>(id: &'a str, record: &'a Record) -> impl Iterator<Item = &'a str> {
        std::iter::once(id).chain(record.names.iter().map(String::as_str))
    }

    /// Whether a container uses image `id`.
    fn used(&self, id: &str, record: &Record) -> bool {
        Self::names(id, record).any(|name| self.containers.contains(name))
    }

    /// Whether image `id` is the sandbox image.
    fn sandbox(&self, id: &str, record: &Record) -> bool {
        self.sandbox_image
            .as_deref()
            .is_some_and(|sandbox| Self::names(id, record).any(|name| name == sandbox))
    }
}

/// The records of every image the runtime lists, by image id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Records {
    images: BTreeMap<String, Record>,
}

impl Records {
    /// Brings the records up to `images` listed at `now`: a new image is first detected now,
    /// an image `holders` shows in use was last used now, an image no longer listed is
    /// forgotten.
    pub fn detect(&mut self, images: &[cri::Image], holders: &Holders, now: Instant) {
        let listed: BTreeSet<&str> = images.iter().map(|i| i.id.as_str()).collect();
        self.images.retain(|id, _| listed.contains(id.as_str()));
        for image in images {
            let record = self
                .images
                .entry(image.id.clone())
                .or_insert_with(|| Record {
                    first_detected: now,
                    last_used: None,
                    size: 0,
                    pinned: false,
                    names: Vec::new(),
                });
            record.size = image.size;
            record.pinned = image.pinned;
            record.names = image
                .repo_tags
                .iter()
                .chain(&image.repo_digests)
                .cloned()
                .collect();
            if holders.used(&image.id, record) {
                record.last_used = Some(now);
            }
        }
    }

    /// Drops the record of a removed image.
    pub fn forget(&mut self, id: &str) {
        self.images.remove(id);
    }

    /// How many images are known.
    #[must_use]
    pub fn len(&self) -> usize {
        self.images.len()
    }

    /// Whether no image is known.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.images.is_empty()
    }
}

/// The image filesystem as read for a pass, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Disk {
    /// Its size.
    pub capacity: u64,
    /// What is free for use.
    pub available: u64,
}

/// How much a pass removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Goal {
    /// The periodic pass: images past the maximum age, then, when usage of `Disk` is at or
    /// above the high threshold, unused images down to the low threshold.
    Thresholds(Disk),
    /// Disk pressure (the eviction manager): every unused image old enough, whatever the usage.
    AllUnused,
}

/// Why an image is removed: the label of `kubelet_image_garbage_collected_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reason {
    /// Not used for longer than `imageMaximumGCAge`.
    Age,
    /// Removed to bring the image filesystem's usage down.
    Space,
}

impl Reason {
    /// Upstream's label value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Reason::Age => "age",
            Reason::Space => "space",
        }
    }
}

/// One image to remove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    /// The runtime's image id.
    pub id: String,
    /// Its tag (or the id), for logs.
    pub shown: String,
    /// Its size in bytes, counted as freed when it is removed (as upstream does).
    pub size: u64,
    /// Why it goes.
    pub reason: Reason,
}

/// How far the image filesystem is over its high threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shortfall {
    /// Usage in percent, as upstream rounds it (up).
    pub usage_percent: u64,
    /// Bytes to free to reach the low threshold.
    pub to_free: u64,
}

/// What one pass removes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Images past the maximum age, removed first, whatever the usage.
    pub by_age: Vec<Removal>,
    /// The images that may go for space, least recently used first (then first detected
    /// first); the executor removes them in order until `shortfall.to_free` bytes are freed.
    pub by_space: Vec<Removal>,
    /// How much must be freed; `None`: usage is below the high threshold, nothing goes for
    /// space. For [`Goal::AllUnused`], `to_free` is `u64::MAX`.
    pub shortfall: Option<Shortfall>,
}

/// Why no plan could be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The image filesystem reports no capacity (upstream's `InvalidDiskCapacity`).
    #[error("invalid capacity 0 on image filesystem")]
    ZeroCapacity,
}

/// Usage in percent and the bytes to free to reach `low_percent`, when usage is at or above
/// `high_percent`; upstream's integer arithmetic, without its overflows.
fn shortfall(disk: Disk, policy: &Policy) -> Result<Option<Shortfall>, PlanError> {
    if disk.capacity == 0 {
        return Err(PlanError::ZeroCapacity);
    }
    let capacity = u128::from(disk.capacity);
    let available = u128::from(disk.available.min(disk.capacity));
    let free_percent = available * 100 / capacity;
    let usage_percent = 100 - u64::try_from(free_percent).unwrap_or(100);
    if usage_percent < policy.high_percent {
        return Ok(None);
    }
    let wanted_free = capacity * u128::from(100 - policy.low_percent.min(100)) / 100;
    let to_free = u64::try_from(wanted_free.saturating_sub(available)).unwrap_or(u64::MAX);
    Ok(Some(Shortfall {
        usage_percent,
        to_free,
    }))
}

/// Decides what a pass removes from the images in `records`, with `holders` keeping theirs,
/// at `now`; `began` is when image GC started (no image goes for age before the maximum age
/// has passed since then, so images seen unused at start are not taken for old).
///
/// # Errors
/// [`PlanError::ZeroCapacity`] when the image filesystem reports no capacity.
pub fn plan(
    records: &Records,
    holders: &Holders,
    goal: Goal,
    policy: &Policy,
    now: Instant,
    began: Instant,
) -> Result<Plan, PlanError> {
    let mut eligible: Vec<(&String, &Record)> = records
        .images
        .iter()
        .filter(|(id, record)| {
            !record.pinned && !holders.used(id, record) && !holders.sandbox(id, record)
        })
        .collect();
    eligible.sort_by_key(|(id, record)| (record.last_used, record.first_detected, *id));
    let removal = |id: &String, record: &Record, reason| Removal {
        id: id.clone(),
        shown: record.shown(id).to_owned(),
        size: record.size,
        reason,
    };
    let mut by_age = Vec::new();
    let shortfall = match goal {
        Goal::Thresholds(disk) => {
            let shortfall = shortfall(disk, policy)?;
            if let Some(max_age) = policy.max_age {
                if now.saturating_duration_since(began) > max_age {
                    eligible.retain(|(id, record)| {
                        let since = record.last_used.unwrap_or(record.first_detected);
                        let old = now.saturating_duration_since(since) > max_age;
                        if old {
                            by_age.push(removal(id, record, Reason::Age));
                        }
                        !old
                    });
                }
            }
            shortfall
        }
        Goal::AllUnused => Some(Shortfall {
            usage_percent: 0,
            to_free: u64::MAX,
        }),
    };
    let by_space = match shortfall {
        Some(_) => eligible
            .into_iter()
            .filter(|(_, record)| {
                now.saturating_duration_since(record.first_detected) >= policy.min_age
            })
            .map(|(id, record)| removal(id, record, Reason::Space))
            .collect(),
        None => Vec::new(),
    };
    Ok(Plan {
        by_age,
        by_space,
        shortfall,
    })
}

#[cfg(test)]
#[path = "images_tests.rs"]
mod tests;
