//! The probe workers of one pod, held by its pod actor: one per probe of each running
//! container instance, started and stopped to match what the runtime shows, under a dynamic
//! supervisor of the pod's own (at the pod actor's place in the tree) that restarts a worker
//! which panics or fails, and the verdicts they reported. A worker that dies takes its verdict
//! with it: until its successor's first result there is none.

use std::collections::BTreeMap;
use std::future::Future;
use std::rc::Rc;
use std::time::{Duration, SystemTime};

use actix::{Addr, Recipient};
use sergeant_messages::pods::core::{Container, Pod};
use sergeant_messages::pods::PodKey;
use sergeant_messages::runtime::cri;
use sergeant_messages::supervision::{GetTree, TreeNode};
use sergeant_supervisor::{
    spawn_actor, ChildEnv, DynamicSpec, DynamicSupervisor, GiveUpPolicy, Incarnation,
    RestartPolicy, Running, Slot, StartChild, StopChild,
};
use tokio::sync::watch;

use super::worker::{ProbeJob, ProbeResult, ProbeWorker, ProbedContainer};
use crate::events::PodEvents;
use crate::runtime::RuntimePort;
use sergeant_core::probe::ProbeKind;
use sergeant_core::runtime::PodRuntime;

/// The jobs of the pod's workers by child name; the supervisor makes each incarnation from it.
type Jobs = BTreeMap<String, ProbeJob>;

/// The running probe supervisor of a pod; dropping it stops the supervisor and its workers.
struct Supervising {
    addr: Addr<DynamicSupervisor<ProbeWorker>>,
    _running: Running,
}

/// The probe workers and verdicts of one pod.
pub struct ProbeSet {
    /// The pod actor's place in the tree: the workers are its children.
    env: ChildEnv,
    policy: RestartPolicy,
    supervisor: Option<Supervising>,
    jobs: watch::Sender<Jobs>,
    /// The container instance each worker probes.
    workers: BTreeMap<(String, ProbeKind), String>,
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
    /// The probe workers of the pod actor at `env`, restarted by `policy`; none until
    /// [`ProbeSet::reconcile`] finds running containers with probes.
    #[must_use]
    pub fn new(env: &ChildEnv, policy: RestartPolicy) -> Self {
        Self {
            env: env.clone(),
            policy,
            supervisor: None,
            jobs: watch::Sender::new(Jobs::new()),
            workers: BTreeMap::new(),
            verdicts: BTreeMap::new(),
        }
    }

    /// Starts the workers the running containers of `runtime` need and stops the rest. A new
    /// container instance gets new workers and loses the old verdicts; liveness and readiness
    /// wait until the startup probe (if any) has passed.
    pub fn reconcile(&mut self, pod: &Pod, runtime: &PodRuntime, deps: &ProbeDeps<'_>) {
        let supervisor = self.supervisor(deps.report);
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
        let mut gone = Vec::new();
        self.workers.retain(|key, id| {
            let keep = wanted.get(key).is_some_and(|(_, want, _)| want == id);
            if !keep {
                gone.push(child_name(key));
            }
            keep
        });
        let workers = &self.workers;
        self.verdicts
            .retain(|key, _| workers.contains_key(key) || wanted.contains_key(key));
        if !gone.is_empty() {
            self.jobs.send_modify(|jobs| {
                for name in &gone {
                    jobs.remove(name);
                }
            });
        }
        for name in gone {
            supervisor.do_send(StopChild::named(name));
        }
        for (key, (container, id, started_at)) in wanted {
            if self.workers.contains_key(&key) {
                continue;
            }
            self.verdicts.remove(&key);
            let kind = key.1;
            let Some(probe) = kind.of(container).cloned() else {
                continue;
            };
            let job = ProbeJob {
                kind,
                probe,
                pod: deps.key.clone(),
                container: ProbedContainer {
                    spec: container.clone(),
                    id: id.clone(),
                    pod_ip: pod_ip.clone(),
                    started_at: from_cri_nanos(started_at),
                },
                port: deps.port.clone(),
                report: deps.report.clone(),
                events: deps.events.clone(),
            };
            let name = child_name(&key);
            self.jobs.send_modify(|jobs| {
                jobs.insert(name.clone(), job);
            });
            let slot = Slot::new(&name);
            supervisor.do_send(StartChild { name, slot });
            self.workers.insert(key, id);
        }
    }

    /// The pod's probe supervisor, started now if it is not running (at first, or after it
    /// died: its workers died with it, and so did what they vouched for).
    fn supervisor(
        &mut self,
        report: &Recipient<ProbeResult>,
    ) -> Addr<DynamicSupervisor<ProbeWorker>> {
        if let Some(running) = self.supervisor.as_ref().filter(|s| s.addr.connected()) {
            return running.addr.clone();
        }
        self.workers.clear();
        self.verdicts.clear();
        self.jobs.send_replace(Jobs::new());
        let jobs = self.jobs.subscribe();
        let make = move |name: &str, env: &ChildEnv| {
            let job = jobs.borrow().get(name).cloned()?;
            let span = tracing::info_span!(
                "probe",
                path = %env.path(),
                pod = %job.pod,
                container = %job.container.spec.name,
                kind = %job.kind,
            );
            Some(Incarnation {
                actor: ProbeWorker::new(env, job),
                span,
            })
        };
        let jobs = self.jobs.subscribe();
        let report = report.clone();
        let lost = move |name: &str, failure: &str| {
            let Some(job) = jobs.borrow().get(name).cloned() else {
                return;
            };
            report.do_send(ProbeResult {
                container: job.container.spec.name,
                container_id: job.container.id,
                kind: job.kind,
                success: None,
                message: format!("probe worker {failure}"),
            });
        };
        let spec = DynamicSpec {
            policy: self.policy.clone(),
            give_up: GiveUpPolicy {
                retry_after: self.policy.intensity_period,
            },
            make: Rc::new(make),
            on_give_up: None,
            on_failure: Some(Rc::new(lost)),
            inspect: None,
        };
        // At the pod actor's own path: its workers show below it in the tree.
        let env = ChildEnv::new(self.env.path());
        let (addr, running) = spawn_actor(DynamicSupervisor::new(&env, spec), env.span());
        self.supervisor = Some(Supervising {
            addr: addr.clone(),
            _running: running,
        });
        addr
    }

    /// Takes a verdict in. Returns whether it is current (from the instance now probed) and
    /// changed anything; a lost verdict (`success` `None`) is forgotten.
    pub fn record(&mut self, result: &ProbeResult) -> bool {
        let key = (result.container.clone(), result.kind);
        let current = self
            .workers
            .get(&key)
            .is_some_and(|id| *id == result.container_id);
        if !current {
            return false;
        }
        match result.success {
            Some(success) => self.verdicts.insert(key, success) != Some(success),
            None => self.verdicts.remove(&key).is_some(),
        }
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
        self.supervisor = None;
        self.jobs.send_replace(Jobs::new());
        self.workers.clear();
        self.verdicts.clear();
    }

    /// The probe workers as a subtree, for `/debug/supervision` (answered by the pod actor).
    pub fn tree(&self) -> impl Future<Output = TreeNode> + 'static {
        let supervisor = self.supervisor.as_ref().map(|s| s.addr.clone());
        let none = TreeNode::dynamic(self.env.path(), "no probe workers".to_owned());
        async move {
            match supervisor {
                Some(supervisor) => supervisor.send(GetTree::default()).await.unwrap_or(none),
                None => none,
            }
        }
    }
}

/// A worker's name under the probe supervisor: `<container>:<kind>` (`web:readiness`).
fn child_name((container, kind): &(String, ProbeKind)) -> String {
    format!("{container}:{}", kind.name().to_lowercase())
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
