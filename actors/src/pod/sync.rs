//! One level-triggered sync of a pod, as a loop: look at the runtime ([`observe`]), ask
//! `sergeant_core::plan` what to do ([`plan`]: kill the pod, create a sandbox, kill and start
//! containers, or wait out back-offs), carry that out ([`execute`]), and look again — until the
//! plan has nothing left but waits, then apply what an in-place resize needs (`super::resize`), and
//! report what the pod looks like. Deciding and acting never interleave. Between any two runtime actions it checks the pod actor's [`Interrupt`],
//! and stops there once the pod is being stopped.
//!
//! Entry point: [`sync`].

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use futures::channel::mpsc;
use sergeant_messages::pods::core::Pod;

use super::error::{PodError, Stopped};
use super::execute::{execute, Executed};
use super::interrupt::{Interrupt, Interrupted};
use super::look::{look_after, Look, Progress, RuntimeChanges};
use super::observe::observe;
use super::resize::{apply_resize, raise_pod_cgroup};
use super::sandbox::PodSetup;
use crate::runtime::RuntimePort;
use sergeant_core::backoff::{Backoff, BackoffPolicy};
use sergeant_core::kind::all_containers;
use sergeant_core::plan::{plan, PlanInput, ProbeVerdicts};
use sergeant_core::restart::RestartGates;
use sergeant_core::runtime::PodRuntime;
use sergeant_core::spec::NodeContext;
use sergeant_core::status::Waiting;
use sergeant_host::termination::read_messages;
use sergeant_kube_api::{ObjectUser, TokenCache};

/// Everything one sync needs; the pod actor hands it over and gets a [`SyncOutcome`] back.
pub struct SyncInput {
    /// The desired pod.
    pub pod: Arc<Pod>,
    /// The runtime.
    pub port: RuntimePort,
    /// The node's settings for pods.
    pub node: Arc<NodeContext>,
    /// Container restart back-off, by [`sergeant_core::plan::backoff_key`].
    pub restarts: Backoff,
    /// Image pull back-off, by image.
    pub pulls: Backoff,
    /// The crash-loop periods.
    pub restart_policy: BackoffPolicy,
    /// The feature gates that decide how restarts are read.
    pub restart_gates: RestartGates,
    /// What the prober says of the running containers: a failed liveness or startup probe is
    /// a kill in the plan.
    pub probes: ProbeVerdicts,
    /// The pod failed as a whole and was stopped: only look, change nothing.
    pub halted: bool,
    /// The API server, in managed mode: config maps, secrets and tokens are read through it.
    pub api: Option<kube::Client>,
    /// The pod actor's use of the node's config maps and secrets, in managed mode.
    pub objects: Option<Arc<ObjectUser>>,
    /// The pod's service account tokens.
    pub tokens: TokenCache,
    /// Raised by the pod actor once it stops the pod: the sync stops at its next check.
    pub interrupt: Interrupt,
    /// Raised by the sync as it begins to reset the pod in place (`RestartAllContainers`), for
    /// every status the pod actor reports until it has reported the sync's last look.
    pub resetting: Arc<AtomicBool>,
    /// Where the looks to report before the sync ends go (with when each was begun): the one
    /// it begins with, as upstream reports the status a sync starts from — what set the sync
    /// off (a container that died) is reported at once, not only once a long sync ends — and
    /// the one a pod kill was planned from, so the pod's last state before it is stopped (its
    /// finished containers in their sandbox, with its IP) is reported too.
    pub looks: Option<mpsc::UnboundedSender<(PodRuntime, Instant)>>,
}

/// What a sync did and found.
pub struct SyncOutcome {
    /// The look at the pod after the sync's actions; `None` when it could not be taken
    /// (nothing was measured, so nothing is to be reported).
    pub look: Option<Look>,
    /// Why containers that are not running are waiting.
    pub waiting: BTreeMap<String, Waiting>,
    /// Updated restart back-off.
    pub restarts: Backoff,
    /// Updated pull back-off.
    pub pulls: Backoff,
    /// The tokens, with those obtained by this sync.
    pub tokens: TokenCache,
    /// When the next sync is due because a back-off ends, if any.
    pub next_sync: Option<Instant>,
    /// A failure that stopped the sync early (the runtime was unavailable, say), or the look
    /// after it that could not be taken.
    pub error: Option<PodError>,
    /// Why the in-place resize the pod asks for was not carried out (a memory limit below
    /// what is in use, a refused change); `None` when there was none to do or it was done.
    pub resize_error: Option<String>,
}

/// Runs one sync of `input.pod`. After a failure the pod is looked at afresh, never through
/// a look taken before it.
///
/// # Errors
/// [`Interrupted`]: the pod is being stopped, and the sync stopped between two actions
/// without a last look (the pod's termination takes its own).
pub async fn sync(mut input: SyncInput) -> Result<SyncOutcome, Interrupted> {
    let mut progress = Progress::default();
    let (before, mut error) = if input.halted {
        (None, None)
    } else {
        match converge(&mut input, &mut progress).await {
            Ok(found) => (Some(found), None),
            Err(Stopped::Interrupted) => return Err(Interrupted),
            Err(Stopped::Failed(error)) => (None, Some(error)),
        }
    };
    // The look the loop worked from still holds when it changed nothing since.
    let begun = match &before {
        Some((_, begun)) if matches!(progress.changes, RuntimeChanges::Unchanged) => *begun,
        _ => Instant::now(),
    };
    let before = before.map(|(runtime, _)| runtime);
    let look = match look_after(&input.port, uid(&input.pod), before, progress.changes).await {
        Ok(runtime) => Some(Look {
            // Small files in the pod's directory and the tails of its logs, read on this
            // thread (see `file_work`); nothing when no container exited.
            termination_messages: read_messages(&runtime),
            runtime,
            begun,
            waiting: progress.waiting.clone(),
        }),
        Err(failed) => {
            match &error {
                Some(first) => {
                    tracing::warn!("the pod could not be looked at after {first}: {failed}")
                }
                None => error = Some(failed.into()),
            }
            None
        }
    };
    let now = Instant::now();
    let next_sync = [
        input.restarts.next_expiry(now),
        input.pulls.next_expiry(now),
        progress.reset.then_some(now),
    ]
    .into_iter()
    .flatten()
    .min();
    Ok(SyncOutcome {
        look,
        waiting: progress.waiting,
        restarts: input.restarts,
        pulls: input.pulls,
        tokens: input.tokens,
        next_sync,
        error,
        resize_error: progress.resize_error,
    })
}

/// The pod's UID (empty when it has none).
pub(super) fn uid(pod: &Pod) -> &str {
    pod.metadata.uid.as_deref().unwrap_or_default()
}

/// Looks, plans and acts until the plan has nothing left to do but wait (or a step ends the
/// sync: the pod killed, a container that did not start). Returns the last look at the
/// runtime with when it was begun; `progress` has what was changed since and why containers
/// wait.
///
/// # Errors
/// A failure that stopped it (the runtime's, an unusable spec or volume), or the interrupt.
async fn converge(
    input: &mut SyncInput,
    progress: &mut Progress,
) -> Result<(PodRuntime, Instant), Stopped> {
    let mut begun = Instant::now();
    let mut runtime = observe(&input.port, uid(&input.pod)).await?;
    report_look(input, &runtime, begun);
    input.interrupt.check()?;
    let setup = PodSetup::prepare(input).await?;
    if runtime.ready_sandbox().is_some() {
        setup.refresh_volumes();
    }
    raise_pod_cgroup(input, &runtime)?;
    // Each round lets at least one more container go (an init container at a time): a pod
    // whose rounds go on longer is synced again by its actor.
    let rounds = all_containers(&input.pod).count() + 2;
    for round in 0..rounds {
        input.interrupt.check()?;
        let actions = plan(&PlanInput {
            pod: &input.pod,
            runtime: &runtime,
            restarts: &input.restarts,
            policy: input.restart_policy,
            gates: input.restart_gates,
            probes: &input.probes,
            now: Instant::now(),
            wall_clock: SystemTime::now(),
        });
        input.restarts = actions.restarts.clone();
        progress.waiting.extend(actions.waiting.clone());
        if actions.is_idle() {
            break;
        }
        // The pod's last state before it is stopped or reset is reported: a reset counts the
        // containers it takes out from what the status showed of them.
        if (actions.kill_pod || !actions.reset.is_empty()) && round > 0 {
            report_look(input, &runtime, begun);
        }
        if execute(input, &setup, &runtime, &actions, progress).await? == Executed::Done {
            break;
        }
        let changes = std::mem::take(&mut progress.changes);
        begun = Instant::now();
        runtime = look_after(&input.port, uid(&input.pod), Some(runtime), changes).await?;
    }
    input.interrupt.check()?;
    progress.resize_error = apply_resize(input, &runtime, progress).await?;
    Ok((runtime, begun))
}

/// Hands a look to the pod actor to report before the sync ends. The actor may be gone; the
/// sync goes on regardless.
fn report_look(input: &SyncInput, runtime: &PodRuntime, begun: Instant) {
    if let Some(looks) = &input.looks {
        let _ = looks.unbounded_send((runtime.clone(), begun));
    }
}
