//! `GET /stats/summary`: the upstream kubelet's Summary API — the node's CPU, memory, network,
//! filesystems and process limit from the kernel, and each pod's and container's usage from
//! the runtime's CRI stats, joined with the pod manager's pods.
//!
//! CPU rates (`usageNanoCores`) need the previous sample, which each listener keeps in a
//! small cache of its own ([`stats_summary`] builds the route with it): nothing is shared with
//! other actors. Reads of procfs and filesystems run on blocking threads.

mod assemble;
mod clock;
mod error;
mod fs;
mod host;
mod network;
mod node;
mod pods;
mod procfs;
mod rate;
mod resource_metrics;
mod sandbox;
mod types;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, MethodRouter};
use axum::Json;
use futures::TryFutureExt;

use self::clock::Clock;
use self::error::StatsError;
use self::pods::RuntimeView;
use self::rate::CpuRates;
use self::sandbox::SandboxInfo;
use self::types::{FsStats, Summary};
use crate::pod_manager::ListPods;
use crate::server::ServerDeps;

/// What one listener keeps between requests: the previous CPU samples and what it learnt
/// about each sandbox.
#[derive(Debug, Default)]
struct Cache {
    rates: CpuRates,
    sandboxes: HashMap<String, SandboxInfo>,
}

/// The cache, held only for short synchronous steps (never across an await).
type Shared = Arc<Mutex<Cache>>;

fn lock(cache: &Shared) -> MutexGuard<'_, Cache> {
    cache.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The `/stats/summary` route, with its own sample cache: one per listener, so the rates a
/// client sees are between the samples that listener took.
pub fn stats_summary() -> MethodRouter<ServerDeps> {
    let cache = Shared::default();
    get(move |State(deps): State<ServerDeps>| {
        let cache = cache.clone();
        async move {
            match summary(&deps, &cache).await {
                Ok(summary) => Json(summary).into_response(),
                Err(err) => {
                    tracing::warn!("/stats/summary: {err}");
                    (StatusCode::INTERNAL_SERVER_ERROR, format!("{err}\n")).into_response()
                }
            }
        }
    })
}

/// The `/metrics/resource` route, with its own sample cache like [`stats_summary`].
pub fn metrics_resource() -> MethodRouter<ServerDeps> {
    let cache = Shared::default();
    get(move |State(deps): State<ServerDeps>| {
        let cache = cache.clone();
        async move {
            let summary = summary(&deps, &cache)
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
    })
}

/// Gathers the summary.
///
/// # Errors
/// [`StatsError`] when the node's counters, the pod manager or the runtime's lists cannot be
/// read. A pod's network or logs that cannot be read are left out of its entry instead.
async fn summary(deps: &ServerDeps, cache: &Shared) -> Result<Summary, StatsError> {
    let config = deps.config.borrow().active.clone();
    let node_name = config
        .node_name()
        .map_err(|err| StatsError::NodeName(err.to_string()))?;
    let root_dir = config.command_line.root_dir.clone();
    let (pods, view) = futures::try_join!(
        deps.pods.send(ListPods).map_err(StatsError::from),
        RuntimeView::list(&deps.port, &node_name)
    )?;
    let image_fs = view.image_fs.first().cloned();
    let plans = pods::plan(&pods, view);
    let infos = sandbox_infos(deps, cache, &plans).await;
    let mut mountpoints: Vec<String> = plans
        .iter()
        .flat_map(|plan| &plan.containers)
        .filter_map(|c| {
            Some(
                c.stats
                    .as_ref()?
                    .writable_layer
                    .as_ref()?
                    .fs_id
                    .as_ref()?
                    .mountpoint
                    .clone(),
            )
        })
        .chain(
            image_fs
                .iter()
                .filter_map(|fs| Some(fs.fs_id.as_ref()?.mountpoint.clone())),
        )
        .collect();
    mountpoints.sort();
    mountpoints.dedup();
    let (node, host, plans, clock) = tokio::task::spawn_blocking(move || {
        let node = node::sample(&root_dir)?;
        let clock = Clock::read();
        let host = host::gather(&plans, &infos, &mountpoints, clock);
        Ok::<_, StatsError>((node, host, plans, clock))
    })
    .await??;
    let image_fs = image_fs.map(|usage| image_fs_stats(&usage, &host.filesystems, node.root_fs()));
    let mut cache = lock(cache);
    let node = node.into_stats(node_name, &mut cache.rates, image_fs);
    let live: Vec<String> = plans
        .iter()
        .flat_map(|plan| plan.containers.iter().map(|c| c.id.clone()))
        .collect();
    let pods = assemble::pods(
        plans,
        assemble::Inputs {
            host,
            root_fs: node.fs.as_ref(),
            rates: &mut cache.rates,
            clock,
        },
    );
    cache.rates.retain(live.iter().map(String::as_str));
    Ok(Summary { node, pods })
}

/// The kept information of the plans' sandboxes, in the plans' order; sandboxes not seen
/// before are asked about (concurrently), and sandboxes gone are forgotten.
async fn sandbox_infos(
    deps: &ServerDeps,
    cache: &Shared,
    plans: &[pods::PodPlan],
) -> Vec<SandboxInfo> {
    let unknown: Vec<String> = {
        let cache = lock(cache);
        plans
            .iter()
            .map(|plan| plan.sandbox_id.clone())
            .filter(|id| !cache.sandboxes.contains_key(id))
            .collect()
    };
    let fetched =
        futures::future::join_all(unknown.into_iter().map(|id| sandbox::fetch(&deps.port, id)))
            .await;
    let mut cache = lock(cache);
    cache.sandboxes.extend(fetched.into_iter().flatten());
    cache
        .sandboxes
        .retain(|id, _| plans.iter().any(|plan| &plan.sandbox_id == id));
    plans
        .iter()
        .map(|plan| {
            cache
                .sandboxes
                .get(&plan.sandbox_id)
                .cloned()
                .unwrap_or_default()
        })
        .collect()
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
        time: clock::time_of_ns(usage.timestamp),
        ..fs::consumer(fs, used)
    }
}
