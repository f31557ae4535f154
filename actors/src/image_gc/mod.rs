//! Garbage collection of unused images, as the upstream kubelet's image GC manager: when the
//! image filesystem is at or above `imageGCHighThresholdPercent`, unused images go, least
//! recently used first, until it is down to `imageGCLowThresholdPercent`; images unused for
//! longer than `imageMaximumGCAge` go whatever the usage. Under disk pressure the eviction
//! manager asks for every unused image ([`ReclaimImages`]) after the dead containers and
//! before evicting a pod.
//!
//! Entry point: [`child_spec`], the `image-gc` worker of the `node` supervisor
//! ([`ImageGarbageCollector`]). [`sergeant_core::gc::images`] decides what a pass removes,
//! `pass` reads the runtime and removes. Metric: `kubelet_image_garbage_collected_total{reason}`.

mod actor;
mod pass;

pub use actor::{child_spec, ImageGarbageCollector, ReclaimImages};
pub use pass::PassError;
