//! The probe workers of one pod, held by its pod actor: one per probe of each running
//! container instance, started and stopped to match what the runtime shows, and the verdicts
//! they reported.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use actix::Recipient;
use sergeant_messages::pods::core::{Container, Pod};
use sergeant_messages::pods::PodKey;
use sergeant_messages::runtime::cri;

use super::settings::ProbeKind;
use super::worker::{ProbeResult, ProbeWorker, ProbedContainer};
use crate::events::PodEvents;
use crate::runtime::RuntimePort;
use sergeant_core::runtime::PodRuntime;
use sergeant_supervisor::{spawn_actor, Running};

/// A running worker and the instance it probes; dropping it stops the worker.
struct Entry {
    container_id: String,
    _worker: Running,
}

/// The probe workers and verdicts of one pod.
#[derive(Default)]
pub struct ProbeSet {
    workers: BTreeMap<(String, ProbeKind), Entry>,
    verdicts: BTreeMap<(String, ProbeKind), bool>,
}

/// What new workers need from the pod actor.
pub struct ProbeDeps<'a> {
    /// The pod.
    pub key: &'a PodKey,
    /// The runtime, for exec probes.
    pub port: &'a RuntimePort,
    /// Where verdicts go.
    pub report: &'a Recipient<ProbeResult>,
    /// The pod's events (failed probes are `Unhealthy`).
    pub events: &'a PodEvents,
}

impl ProbeSet {
    /// Starts the workers the running containers of `runtime` need and stops the rest. A new
    /// container instance gets new workers and loses the old verdicts; liveness and readiness
    /// wait until the startup probe (if any) has passed.
    pub fn reconcile(&mut self, pod: &Pod, runtime: &PodRuntime, deps: &ProbeDeps<'_>) {
        let sandbox = runtime.ready_sandbox().map(|s| s.id.clone());
        let pod_ip = runtime.pod_ip();
        let mut wanted = BTreeMap::new();
        for container in probed_containers(pod) {
            let running = sandbox
                .as_deref()
                .and_then(|sandbox| runtime.latest(sandbox, &container.name))
                .filter(|c| c.state() == cri::ContainerState::ContainerRunning);
            let Some(running) = running else { continue };
            let started = container.startup_probe.is_none()
                || self
                    .verdicts
                    .get(&(container.name.clone(), ProbeKind::Startup))
                    == Some(&true);
            for kind in ProbeKind::ALL {
                if kind.of(container).is_some() && (kind == ProbeKind::Startup || started) {
                    wanted.insert(
                        (container.name.clone(), kind),
                        (
                            container,
                            running.status.id.clone(),
                            running.status.started_at,
                        ),
                    );
                }
            }
        }
        self.workers.retain(|key, entry| {
            wanted
                .get(key)
                .is_some_and(|(_, id, _)| *id == entry.container_id)
        });
        let workers = &self.workers;
        self.verdicts
            .retain(|key, _| workers.contains_key(key) || wanted.contains_key(key));
        for (key, (container, id, started_at)) in wanted {
            if self.workers.contains_key(&key) {
                continue;
            }
            self.verdicts.remove(&key);
            let kind = key.1;
            let Some(probe) = kind.of(container).cloned() else {
                continue;
            };
            let probed = ProbedContainer {
                spec: container.clone(),
                id: id.clone(),
                pod_ip: pod_ip.clone(),
                started_at: from_cri_nanos(started_at),
            };
            let span = tracing::info_span!("probe", kind = %kind, container = %container.name);
            let worker = ProbeWorker::new(
                kind,
                probe,
                deps.key.clone(),
                probed,
                deps.port.clone(),
                deps.report.clone(),
                deps.events.clone(),
            );
            let (_, running) = spawn_actor(worker, span);
            self.workers.insert(
                key,
                Entry {
                    container_id: id,
                    _worker: running,
                },
            );
        }
    }

    /// Takes a verdict in. Returns whether it is current (from the instance now probed) and
    /// changed anything.
    pub fn record(&mut self, result: &ProbeResult) -> bool {
        let key = (result.container.clone(), result.kind);
        let current = self
            .workers
            .get(&key)
            .is_some_and(|entry| entry.container_id == result.container_id);
        current && self.verdicts.insert(key, result.success) != Some(result.success)
    }

    /// Verdicts of `kind` by container name, as pod status wants them.
    #[must_use]
    pub fn verdicts(&self, kind: ProbeKind) -> BTreeMap<String, bool> {
        self.verdicts
            .iter()
            .filter(|((_, k), _)| *k == kind)
            .map(|((name, _), ok)| (name.clone(), *ok))
            .collect()
    }

    /// Stops every worker (the pod is stopping).
    pub fn clear(&mut self) {
        self.workers.clear();
        self.verdicts.clear();
    }
}

/// The containers probes apply to: sidecars (restartable init containers) and app containers.
fn probed_containers(pod: &Pod) -> impl Iterator<Item = &Container> {
    let spec = pod.spec.as_ref();
    let sidecars = spec
        .and_then(|s| s.init_containers.as_ref())
        .into_iter()
        .flatten()
        .filter(|c| c.restart_policy.as_deref() == Some("Always"));
    sidecars.chain(spec.into_iter().flat_map(|s| s.containers.iter()))
}

fn from_cri_nanos(nanos: i64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_nanos(u64::try_from(nanos).unwrap_or(0))
}
