//! The supervision tree of ARCHITECTURE.md, declared in one place.
//!
//! ```text
//! root (one_for_one)
//! ├─ config-watcher
//! ├─ runtime (rest_for_one): runtime-adapter, cni-adapter, pleg
//! ├─ node (one_for_one): node-status, eviction-manager, gc
//! ├─ pods (one_for_one): sources, pod-manager, status-manager
//! └─ server
//! ```

use std::path::PathBuf;

use metrics_exporter_prometheus::PrometheusHandle;
use sergeant_config::FlagOverrides;
use sergeant_messages::runtime::RuntimeHealth;
use sergeant_messages::supervision::Strategy;
use tokio::sync::watch;

use crate::config_feed::ConfigFeed;
use crate::config_watcher::{ConfigWatcher, VerbosityControl};
use crate::pending::Pending;
use crate::runtime::{AdapterFactory, RuntimeAdapter};
use crate::server::{Server, ServerDeps};
use crate::supervisor::{ChildSpec, RestartPolicy, Slot, Supervisor};

/// Everything the tree is built from; `main` assembles it.
pub struct TreeDeps {
    /// The restart policy of every supervisor.
    pub policy: RestartPolicy,
    /// The configuration file being watched.
    pub config_path: PathBuf,
    /// The command-line overrides, re-applied on every reload.
    pub flags: FlagOverrides,
    /// The live configuration.
    pub config: ConfigFeed,
    /// Applies a new log verbosity.
    pub verbosity: VerbosityControl,
    /// The Prometheus handle for `/metrics`.
    pub metrics: PrometheusHandle,
    /// Starts the runtime adapter the configuration asks for.
    pub adapter_factory: AdapterFactory,
}

/// A role of the tree whose job is not built yet.
fn pending(name: &'static str, missing: &'static str) -> ChildSpec {
    ChildSpec::worker(name, &Slot::new(name), move |env| {
        Pending::new(env, name, missing)
    })
}

/// Declares the whole tree; start it with [`crate::supervisor::start_root`].
#[must_use]
pub fn build(deps: TreeDeps) -> ChildSpec {
    let policy = deps.policy;
    let root_slot: Slot<Supervisor> = Slot::new("root");

    let watcher_feed = deps.config.clone();
    let config_watcher =
        ChildSpec::worker("config-watcher", &Slot::new("config-watcher"), move |env| {
            ConfigWatcher::new(
                env,
                deps.config_path.clone(),
                deps.flags.clone(),
                watcher_feed.clone(),
                deps.verbosity.clone(),
            )
        });

    let runtime_health = watch::Sender::new(RuntimeHealth::default());
    let adapter_config = deps.config.subscribe();
    let factory = deps.adapter_factory;
    let runtime_adapter = ChildSpec::worker(
        "runtime-adapter",
        &Slot::new("runtime-adapter"),
        move |env| {
            RuntimeAdapter::new(
                env,
                factory.clone(),
                adapter_config.clone(),
                runtime_health.clone(),
            )
        },
    );
    let runtime = ChildSpec::supervisor(
        "runtime",
        Strategy::RestForOne,
        &policy,
        &Slot::new("runtime"),
        vec![
            runtime_adapter,
            pending("cni-adapter", "CNI plugin execution and network readiness"),
            pending("pleg", "the pod lifecycle event generator"),
        ],
    );
    let node = ChildSpec::supervisor(
        "node",
        Strategy::OneForOne,
        &policy,
        &Slot::new("node"),
        vec![
            pending("node-status", "node registration, status and lease"),
            pending(
                "eviction-manager",
                "eviction signals, thresholds and evictions",
            ),
            pending(
                "gc",
                "garbage collection of dead containers and unused images",
            ),
        ],
    );
    let pods = ChildSpec::supervisor(
        "pods",
        Strategy::OneForOne,
        &policy,
        &Slot::new("pods"),
        vec![
            pending("sources", "pod sources (static manifests, API server)"),
            pending("pod-manager", "admission and pod actors"),
            pending("status-manager", "pod status reporting"),
        ],
    );

    let server_deps = ServerDeps {
        root: root_slot.reference(policy.delivery_timeout),
        metrics: deps.metrics,
        config: deps.config.subscribe(),
    };
    let server = ChildSpec::worker("server", &Slot::new("server"), move |env| {
        Server::new(env, server_deps.clone())
    });

    ChildSpec::supervisor(
        "root",
        Strategy::OneForOne,
        &policy,
        &root_slot,
        vec![config_watcher, runtime, node, pods, server],
    )
}
