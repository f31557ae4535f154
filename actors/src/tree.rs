//! The supervision tree of ARCHITECTURE.md, declared in one place.
//!
//! ```text
//! root (one_for_one)
//! ├─ config-watcher
//! ├─ runtime (rest_for_one): runtime-adapter, cni-adapter, pleg
//! ├─ node (one_for_one): stats-provider, node-status, image-gc, eviction-manager, gc,
//! │   container-log-manager
//! ├─ pods (one_for_one): sources, mirror-pods, event-recorder and api-source (managed),
//! │   pod-supervisor (dynamic: one pod actor per pod, named by UID, each with its probe
//! │   workers below it), pod-manager, status-manager
//! └─ server (one_for_one): healthz, read-only, kubelet-api (the ports that are not 0)
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;

use metrics_exporter_prometheus::PrometheusHandle;
use sergeant_config::FlagOverrides;
use sergeant_core::node_status::facts::RuntimeHealth;
use sergeant_messages::pods::{PodSource, SourceSnapshot};
use sergeant_messages::supervision::Strategy;
use tokio::sync::watch;

use crate::config_feed::ConfigFeed;
use crate::config_watcher::{ConfigWatcher, VerbosityControl};
use crate::logs::ContainerLogManager;
use crate::pleg::Pleg;
use crate::pod_manager::{pod_supervisor, PodManager, PodManagerDeps, POD_SUPERVISOR};
use crate::runtime::{AdapterFactory, RuntimeAdapter, RuntimePort};
use crate::serving::{ServerChildren, ServerDeps};
use crate::sources::{api_child_spec, StaticPodSource};
use crate::status_manager::{self, StatusManager};
use sergeant_kube_api::ObjectCache;
use sergeant_supervisor::{ChildSpec, RestartPolicy, Slot, Supervisor, TreeHealth};

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
    /// This node's name (`--hostname-override` or the hostname).
    pub node_name: String,
    /// The API server client in managed mode (`--kubeconfig`); `None` when standalone.
    pub api: Option<kube::Client>,
    /// The listeners of the node's HTTP server, built once the children they read exist.
    pub server: ServerChildren,
    /// Where the tree publishes its health for `/healthz`; `start_root` is given the same.
    pub health: TreeHealth,
}

/// Declares the whole tree; start it with [`sergeant_supervisor::start_root`].
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
    let cni_verdict = watch::Sender::new(None);
    let node_health = runtime_health.subscribe();
    let admission_health = runtime_health.subscribe();
    let adapter_config = deps.config.subscribe();
    let factory = deps.adapter_factory;
    let adapter_slot = Slot::new("runtime-adapter");
    let port = RuntimePort::new(adapter_slot.reference(policy.delivery_timeout));
    let runtime_adapter = ChildSpec::worker("runtime-adapter", &adapter_slot, move |env| {
        RuntimeAdapter::new(
            env,
            factory.clone(),
            adapter_config.clone(),
            runtime_health.clone(),
        )
    });
    let manager_slot: Slot<PodManager> = Slot::new("pod-manager");
    let node_name = deps.node_name;
    let log_node = node_name.clone();
    let source_node = node_name.clone();
    let image_gc_node = node_name.clone();
    let pleg_health = watch::Sender::new(None);
    let (pleg_port, pleg_pods, pleg_publish) = (
        port.clone(),
        manager_slot.reference(policy.delivery_timeout),
        pleg_health.clone(),
    );
    let pleg = ChildSpec::worker("pleg", &Slot::new("pleg"), move |env| {
        Pleg::new(
            env,
            pleg_port.clone(),
            pleg_pods.clone(),
            node_name.clone(),
            pleg_publish.clone(),
        )
    });
    let runtime = ChildSpec::supervisor(
        "runtime",
        Strategy::RestForOne,
        &policy,
        &Slot::new("runtime"),
        vec![
            runtime_adapter,
            crate::cni::child_spec(port.clone(), deps.config.subscribe(), cni_verdict.clone()),
            pleg,
        ],
    );
    let (log_port, log_config) = (port.clone(), deps.config.subscribe());
    let container_log_manager = ChildSpec::worker(
        "container-log-manager",
        &Slot::new("container-log-manager"),
        move |env| {
            ContainerLogManager::new(env, log_port.clone(), log_config.clone(), log_node.clone())
        },
    );
    let stats = watch::Sender::new(None);
    let pressure = watch::Sender::new(std::collections::BTreeSet::new());
    // Events go to the recorder in managed mode; the node's own (image GC) come from `node`.
    let (events, event_inbox) = if deps.api.is_some() {
        let (sink, inbox) = crate::events::channel();
        (sink, Some(inbox))
    } else {
        (crate::events::EventSink::standalone(), None)
    };
    let image_gc_slot = Slot::new("image-gc");
    let image_gc = crate::image_gc::child_spec(
        &image_gc_slot,
        port.clone(),
        deps.config.subscribe(),
        events.clone(),
        image_gc_node,
    );
    let eviction_manager = crate::eviction::child_spec(crate::eviction::EvictionDeps {
        images: image_gc_slot.reference(policy.delivery_timeout),
        port: port.clone(),
        config: deps.config.subscribe(),
        stats: stats.subscribe(),
        pods: manager_slot.reference(policy.delivery_timeout),
        pressure: pressure.clone(),
    });
    let stats_provider =
        crate::stats::child_spec(port.clone(), deps.config.subscribe(), stats.clone());
    // The pods' config maps and secrets, kept as the strategy says (a restart changes it).
    let strategy = deps
        .config
        .borrow()
        .active
        .kubelet
        .config_map_and_secret_change_detection_strategy;
    let objects = deps
        .api
        .clone()
        .map(|client| ObjectCache::new(client, strategy));
    let node = ChildSpec::supervisor(
        "node",
        Strategy::OneForOne,
        &policy,
        &Slot::new("node"),
        vec![
            stats_provider,
            crate::node_status::child_spec(
                deps.config.subscribe(),
                deps.api
                    .clone()
                    .zip(objects.clone())
                    .map(|(client, objects)| crate::node_status::ManagedDeps {
                        client,
                        port: port.clone(),
                        health: node_health,
                        cni: cni_verdict.subscribe(),
                        pressure: pressure.subscribe(),
                        objects,
                    }),
            ),
            image_gc,
            eviction_manager,
            crate::gc::child_spec(
                port.clone(),
                manager_slot.reference(policy.delivery_timeout),
                deps.config.subscribe(),
            ),
            container_log_manager,
        ],
    );
    let file_source = watch::Sender::new(SourceSnapshot::unsynced(PodSource::File));
    let (source_config, source_out) = (deps.config.subscribe(), file_source.clone());
    let sources = ChildSpec::worker("sources", &Slot::new("sources"), move |env| {
        StaticPodSource::new(env, source_config.clone(), source_out.clone())
    });
    let api_source = watch::Sender::new(SourceSnapshot::unsynced(PodSource::Api));
    let status_slot: Slot<StatusManager> = Slot::new("status-manager");
    let mut pod_sources = vec![file_source.subscribe()];
    let mut pods_children = vec![sources];
    let mirrors = watch::Sender::new(crate::mirror::MirrorView::new());
    if let (Some(client), Some(inbox)) = (deps.api.clone(), event_inbox) {
        pod_sources.push(api_source.subscribe());
        pods_children.push(crate::mirror::child_spec(
            client.clone(),
            source_node.clone(),
            file_source.subscribe(),
            mirrors.clone(),
        ));
        pods_children.push(crate::events::child_spec(
            client.clone(),
            source_node.clone(),
            inbox,
        ));
        pods_children.push(api_child_spec(client, source_node, api_source.clone()));
    }
    let server_port = port.clone();
    // The pod supervisor starts before the pod manager, which asks it for pod actors at once.
    let assignments = watch::Sender::new(BTreeMap::new());
    let pod_supervisor_slot = Slot::new(POD_SUPERVISOR);
    pods_children.push(pod_supervisor(
        &policy,
        &pod_supervisor_slot,
        assignments.subscribe(),
        manager_slot.reference(policy.delivery_timeout),
    ));
    let node_cgroups =
        crate::node_cgroups::child_spec(deps.config.subscribe(), assignments.subscribe());
    let manager_deps = PodManagerDeps {
        port,
        config: deps.config.subscribe(),
        sources: pod_sources,
        status: deps
            .api
            .as_ref()
            .map(|_| status_slot.reference(policy.delivery_timeout)),
        events,
        api: deps.api.clone(),
        objects,
        pod_supervisor: pod_supervisor_slot,
        assignments,
        manager: manager_slot.reference(policy.delivery_timeout),
        supervision: policy.clone(),
        pressure: pressure.subscribe(),
        runtime: admission_health,
    };
    let pod_manager = ChildSpec::worker("pod-manager", &manager_slot, move |env| {
        PodManager::new(env, manager_deps.clone())
    });
    let managed = deps.api.clone().map(|c| {
        let views = status_manager::ApiViews {
            api_pods: api_source.subscribe(),
            mirrors: mirrors.subscribe(),
            statics: file_source.subscribe(),
        };
        (c, views)
    });
    pods_children.extend([
        pod_manager,
        status_manager::child_spec(&status_slot, managed),
        node_cgroups,
    ]);
    let pods = ChildSpec::supervisor(
        "pods",
        Strategy::OneForOne,
        &policy,
        &Slot::new("pods"),
        pods_children,
    );

    let server_deps = ServerDeps {
        root: root_slot.reference(policy.delivery_timeout),
        health: deps.health.clone(),
        metrics: deps.metrics,
        config: deps.config.subscribe(),
        pods: manager_slot.reference(policy.delivery_timeout),
        pleg: pleg_health.subscribe(),
        file_source: file_source.subscribe(),
        api_source: api_source.subscribe(),
        api: deps.api.clone(),
        port: server_port,
        stats: stats.subscribe(),
    };
    let server = ChildSpec::supervisor(
        "server",
        Strategy::OneForOne,
        &policy,
        &Slot::new("server"),
        (deps.server)(&server_deps),
    );

    ChildSpec::supervisor(
        "root",
        Strategy::OneForOne,
        &policy,
        &root_slot,
        vec![config_watcher, runtime, node, pods, server],
    )
}
