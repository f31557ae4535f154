//! `GET /stats/summary`: the upstream kubelet's Summary API — the node's CPU, memory, network,
//! filesystems and process limit from the kernel (from Windows' system calls on Windows), and
//! each pod's and container's usage from the runtime's CRI stats (on Windows the pod sandbox
//! stats alone: `sergeant_core::stats::windows`), joined with the pod manager's pods.
//!
//! The pods' numbers come from the stats provider (`sergeant_actors::stats`), which samples
//! them with the node's in the background every `REFRESH_PERIOD` and shares each sample with
//! the eviction manager; a request reads only the node's counters (with the same reader,
//! `sergeant_host::stats`) and assembles. CPU rates (`usageNanoCores`) need the previous
//! sample, which each listener keeps in a small cache of its own ([`routes`] builds the routes
//! with it). Reads of procfs and filesystems run on blocking threads.

mod assemble;
mod error;
mod node;
mod pods;
mod rate;
mod resource_metrics;
mod system;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use futures::TryFutureExt;

use self::error::StatsError;
use self::rate::CpuRates;
use crate::ServerDeps;
use sergeant_actors::pod_manager::ListPods;
use sergeant_actors::stats::Sample;
use sergeant_core::stats::summary::{FsStats, Summary};
use sergeant_core::stats::windows::pods::by_sandbox;
use sergeant_host::stats::{fs, node as host_node, time_of_ns, Clock};

/// What one listener keeps for its stats routes: the previous CPU samples (held only for
/// short synchronous steps, never across an await).
#[derive(Clone, Default)]
struct Shared {
    rates: Arc<Mutex<CpuRates>>,
}

/// The `/stats/summary` and `/metrics/resource` routes, sharing one CPU sample cache: one per
/// listener, so the rates a client sees are between that listener's samples.
pub fn routes() -> Router<ServerDeps> {
    let shared = Shared::default();
    let for_resource = shared.clone();
    Router::new()
        .route(
            "/stats/summary",
            get(move |State(deps): State<ServerDeps>| {
                let shared = shared.clone();
                async move {
                    match summary(&deps, &shared).await {
                        Ok(summary) => Json(summary).into_response(),
                        Err(err) => {
                            tracing::warn!("/stats/summary: {err}");
                            (StatusCode::INTERNAL_SERVER_ERROR, format!("{err}\n")).into_response()
                        }
                    }
                }
            }),
        )
        .route(
            "/metrics/resource",
            get(move |State(deps): State<ServerDeps>| {
                let shared = for_resource.clone();
                async move {
                    let summary = summary(&deps, &shared)
                        .await
                        .inspect_err(|err| tracing::warn!("/metrics/resource: {err}"))
                        .ok();
                    (
                        [(
                            axum::http::header::CONTENT_TYPE,
                            "text/plain; version=0.0.4; charset=utf-8",
                        )],
                        resource_metrics::render(summary.as_ref()),
                    )
                        .into_response()
                }
            }),
        )
}

/// Gathers the summary: the pod manager's pods joined with the latest background sample, and
/// the node's counters read now.
///
/// # Errors
/// [`StatsError`] when the node's counters or the pod manager cannot be read, or the latest
/// sample failed. A pod's network or logs that cannot be read are left out of its entry
/// instead.
async fn summary(deps: &ServerDeps, shared: &Shared) -> Result<Summary, StatsError> {
    let config = deps.config.borrow().active.clone();
    let node_name = config
        .node_name()
        .map_err(|err| StatsError::NodeName(err.to_string()))?;
    let root_dir = config.command_line.root_dir.clone();
    let (pods, sample, (node, clock)) = futures::try_join!(
        deps.pods.send(ListPods).map_err(StatsError::from),
        latest(deps),
        tokio::task::spawn_blocking(move || Ok((host_node::sample(&root_dir)?, Clock::read())))
            .unwrap_or_else(|err| Err(StatsError::from(err)))
    )?;
    let usage = by_sandbox(&sample.view.sandbox_stats, clock.ns());
    let plans = pods::plan(&pods, &sample.view, &usage);
    let image_fs = sample
        .view
        .image_fs
        .first()
        .map(|usage| image_fs_stats(usage, &sample.host.filesystems, &node.fs));
    let mut rates = shared.rates.lock().unwrap_or_else(PoisonError::into_inner);
    let commit = node.commit;
    let mut node = node::stats(node, node_name, &mut rates, image_fs);
    let live: Vec<String> = plans
        .iter()
        .flat_map(|plan| plan.containers.iter().map(|c| c.id.clone()))
        .collect();
    let pods = assemble::pods(
        plans,
        assemble::Inputs {
            host: &sample.host,
            root_fs: node.fs.as_ref(),
            rates: &mut rates,
            clock,
        },
    );
    node.system_containers =
        system::containers(commit, sample.pods.as_ref(), &pods, clock, &mut rates);
    rates.retain(live.iter().map(String::as_str).chain([system::PODS]));
    Ok(Summary { node, pods })
}

/// The stats provider's latest sample, once it has one.
///
/// # Errors
/// The error of the latest sample, or [`StatsError::ProviderStopped`] when its feed is gone.
async fn latest(deps: &ServerDeps) -> Result<Arc<Sample>, StatsError> {
    let mut feed = deps.stats.clone();
    let latest = feed
        .wait_for(Option::is_some)
        .await
        .map_err(|_| StatsError::ProviderStopped)?;
    match latest.as_ref() {
        Some(Ok(sample)) => Ok(Arc::clone(sample)),
        Some(Err(err)) => Err(StatsError::Sampling(Arc::clone(err))),
        None => Err(StatsError::ProviderStopped),
    }
}

/// The image filesystem: its size from the filesystem at its mount point (the node's root
/// filesystem when that cannot be examined, as on the fake runtime), its use from the runtime.
fn image_fs_stats(
    usage: &sergeant_messages::runtime::cri::FilesystemUsage,
    filesystems: &HashMap<String, FsStats>,
    root_fs: &FsStats,
) -> FsStats {
    let fs = usage
        .fs_id
        .as_ref()
        .and_then(|id| filesystems.get(&id.mountpoint))
        .unwrap_or(root_fs);
    let used = (
        usage.used_bytes.as_ref().map_or(0, |v| v.value),
        usage.inodes_used.as_ref().map_or(0, |v| v.value),
    );
    FsStats {
        time: time_of_ns(usage.timestamp),
        ..fs::consumer(fs, used)
    }
}
