//! The runtime work of image garbage collection: what a pass reads (the images, the images
//! containers hold, the sandbox image, the image filesystem) and the removals it carries out.
//! A failed removal is logged naming the image and the reason; it never stops the others.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use sergeant_core::gc::images::{
    plan, Disk, Goal, Holders, Plan, PlanError, Policy, Records, Removal, Shortfall,
};
use sergeant_host::stats::{fs, Clock};
use sergeant_messages::runtime::cri;
use sergeant_messages::runtime_error::RuntimeError;

use crate::runtime::RuntimePort;

/// The counter of removed images, by reason (upstream's name and label).
pub const COLLECTED_METRIC: &str = "kubelet_image_garbage_collected_total";

/// Why a pass could not decide. `Clone`: the eviction manager's reclaim ([`super::ReclaimImages`])
/// gets it across actors.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PassError {
    /// The runtime could not be listed or asked for its image filesystem.
    #[error("cannot read the runtime: {0}")]
    Runtime(#[from] RuntimeError),
    /// The runtime names no image filesystem.
    #[error("the runtime reports no image filesystem")]
    NoImageFs,
    /// The image filesystem's numbers allow no decision.
    #[error("{0}")]
    Plan(#[from] PlanError),
    /// The image filesystem could not be read.
    #[error("cannot read the image filesystem at {path}: {reason}")]
    ImageFs {
        /// Its mount point, as the runtime names it.
        path: String,
        /// What failed.
        reason: String,
    },
}

/// What starts a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// The period, or a changed policy: the thresholds and the maximum age decide.
    Periodic,
    /// Disk pressure (the eviction manager): every unused image old enough goes.
    Pressure,
}

/// What a pass did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The removals.
    pub executed: Executed,
    /// How far over the high threshold the image filesystem was; `None`: not over.
    pub shortfall: Option<Shortfall>,
    /// How many images the runtime holds after the pass.
    pub known: usize,
}

impl Outcome {
    /// Whether the pass freed less than its shortfall asked for (upstream's
    /// `FreeDiskSpaceFailed`); never for a pressure pass, which has no target.
    #[must_use]
    pub fn short_by(&self) -> Option<(u64, u64)> {
        let wanted = self.shortfall?.to_free;
        (wanted != u64::MAX && self.executed.freed < wanted)
            .then_some((wanted, self.executed.freed))
    }
}

/// The records a collector keeps, shared by its passes: a pass holds them from its
/// detection to its last removal, so passes run one after the other.
pub type SharedRecords = Arc<tokio::sync::Mutex<Records>>;

/// Brings the records up to what the runtime shows now; how many images it holds.
///
/// # Errors
/// [`PassError::Runtime`] when a list fails.
pub async fn detect(port: &RuntimePort, records: &SharedRecords) -> Result<usize, PassError> {
    let mut records = records.lock().await;
    let observed = observe(port).await?;
    records.detect(&observed.images, &observed.holders, Instant::now());
    Ok(records.len())
}

/// Runs one pass: detect, decide ([`plan`]) under `policy`, remove; `began` is when the
/// collector started.
///
/// # Errors
/// [`PassError`] when the runtime or the image filesystem cannot be read, or its capacity is
/// zero; nothing was removed.
pub async fn run(
    port: &RuntimePort,
    records: &SharedRecords,
    trigger: Trigger,
    policy: Policy,
    began: Instant,
) -> Result<Outcome, PassError> {
    let mut records = records.lock().await;
    let observed = observe(port).await?;
    let now = Instant::now();
    records.detect(&observed.images, &observed.holders, now);
    let goal = match trigger {
        Trigger::Periodic => Goal::Thresholds(disk(port).await?),
        Trigger::Pressure => Goal::AllUnused,
    };
    let decided = plan(&records, &observed.holders, goal, &policy, now, began)?;
    let shortfall = decided.shortfall;
    if let Some(over) = shortfall.filter(|_| trigger == Trigger::Periodic) {
        tracing::info!(
            usage_percent = over.usage_percent,
            high = policy.high_percent,
            low = policy.low_percent,
            to_free = over.to_free,
            "image filesystem over the high threshold: removing unused images"
        );
    }
    let executed = execute(port, decided).await;
    for removal in &executed.removed {
        records.forget(&removal.id);
    }
    Ok(Outcome {
        executed,
        shortfall,
        known: records.len(),
    })
}

/// What the runtime showed at the start of a pass.
#[derive(Debug, Clone)]
pub struct Observed {
    /// Every image.
    pub images: Vec<cri::Image>,
    /// The images containers and the runtime hold.
    pub holders: Holders,
}

/// Lists the images, the containers (all states) and the runtime's sandbox image.
///
/// # Errors
/// [`PassError::Runtime`] when a list fails; the sandbox image is only left out (with a
/// warning) when the runtime does not say it.
pub async fn observe(port: &RuntimePort) -> Result<Observed, PassError> {
    let images = port.call(cri::ListImagesRequest { filter: None }).await?;
    let containers = port
        .call(cri::ListContainersRequest { filter: None })
        .await?;
    let sandbox_image = sandbox_image(port).await;
    Ok(Observed {
        images: images.images,
        holders: Holders::of(&containers.containers, sandbox_image),
    })
}

/// The runtime's sandbox image, from its verbose status (containerd's CRI `config`).
async fn sandbox_image(port: &RuntimePort) -> Option<String> {
    let status = match port.call(cri::StatusRequest { verbose: true }).await {
        Ok(status) => status,
        Err(err) => {
            tracing::warn!("cannot ask the runtime for its sandbox image: {err}");
            return None;
        }
    };
    let config: serde_json::Value = serde_json::from_str(status.info.get("config")?).ok()?;
    config["sandboxImage"].as_str().map(str::to_owned)
}

/// The image filesystem now: the runtime names it (CRI `ImageFsInfo`), statvfs measures it,
/// as the stats provider does.
///
/// # Errors
/// [`PassError`] when the runtime or the filesystem cannot be read.
pub async fn disk(port: &RuntimePort) -> Result<Disk, PassError> {
    let info = port.call(cri::ImageFsInfoRequest {}).await?;
    let mountpoint = info
        .image_filesystems
        .first()
        .and_then(|fs| fs.fs_id.as_ref())
        .map(|id| id.mountpoint.clone())
        .ok_or(PassError::NoImageFs)?;
    let path = PathBuf::from(&mountpoint);
    let read = tokio::task::spawn_blocking(move || fs::filesystem(&path, Clock::read())).await;
    let failed = |reason: String| PassError::ImageFs {
        path: mountpoint.clone(),
        reason,
    };
    let stats = read
        .map_err(|err| failed(err.to_string()))?
        .map_err(|err| failed(err.to_string()))?;
    match (stats.capacity_bytes, stats.available_bytes) {
        (Some(capacity), Some(available)) => Ok(Disk {
            capacity,
            available,
        }),
        _ => Err(failed("no capacity or available bytes".to_owned())),
    }
}

/// What the removals of a pass did.
#[derive(Debug, Clone, Default)]
pub struct Executed {
    /// The images removed (or already gone).
    pub removed: Vec<Removal>,
    /// The removals that failed: the image and the runtime's reason.
    pub failed: Vec<(Removal, String)>,
    /// Bytes freed for space: the sizes of the images removed for space.
    pub freed: u64,
}

/// Removes the images of `plan`: every one past the maximum age, then, for space, in order
/// until the shortfall is freed.
pub async fn execute(port: &RuntimePort, plan: Plan) -> Executed {
    let mut done = Executed::default();
    for removal in plan.by_age {
        remove(port, removal, &mut done).await;
    }
    let to_free = plan.shortfall.map_or(0, |s: Shortfall| s.to_free);
    for removal in plan.by_space {
        if done.freed >= to_free {
            break;
        }
        let size = removal.size;
        if remove(port, removal, &mut done).await {
            done.freed = done.freed.saturating_add(size);
        }
    }
    done
}

/// Removes one image, recording the result; whether it is gone.
async fn remove(port: &RuntimePort, removal: Removal, done: &mut Executed) -> bool {
    let request = cri::RemoveImageRequest {
        image: Some(cri::ImageSpec {
            image: removal.id.clone(),
            ..cri::ImageSpec::default()
        }),
    };
    match port.call(request).await {
        Ok(_) => {
            tracing::info!(
                image = %removal.shown,
                id = %removal.id,
                size = removal.size,
                reason = removal.reason.as_str(),
                "removed an unused image"
            );
            metrics::counter!(COLLECTED_METRIC, "reason" => removal.reason.as_str()).increment(1);
            done.removed.push(removal);
            true
        }
        Err(RuntimeError::NotFound { .. }) => {
            done.removed.push(removal); // removed by someone else meanwhile
            true
        }
        Err(err) => {
            tracing::warn!(image = %removal.shown, id = %removal.id, "cannot remove an unused image: {err}");
            done.failed.push((removal, err.to_string()));
            false
        }
    }
}
