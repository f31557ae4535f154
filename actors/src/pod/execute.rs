//! [`execute`]: carries out one plan ([`PodActions`]) in its order — kill the pod, or reset it
//! in place, or create the sandbox, remove leftovers, kill containers, then start containers —
//! and records in the sync's [`Progress`] what it changed and why containers wait. It decides nothing the plan
//! decides; between any two runtime actions it checks the pod actor's interrupt.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use sergeant_messages::runtime::cri;
use sergeant_messages::runtime_error::RuntimeError;

use super::error::{PodError, Stopped};
use super::kill::{free_pod_volumes, kill_container, stop_observed};
use super::look::{Progress, RuntimeChanges};
use super::sandbox::{existing_sandbox, PodSetup, SandboxTarget};
use super::start::{start_container, NotStarted, StartRequest};
use super::sync::{uid, SyncInput};
use sergeant_core::kind::{all_containers, container_named};
use sergeant_core::plan::{
    ContainerKill, ContainerReset, ContainerStart, PodActions, SandboxCreate,
};
use sergeant_core::runtime::PodRuntime;
use sergeant_core::status::Waiting;

/// Where a sync goes after one plan was carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Executed {
    /// Look at the pod again and plan again: what was done may let the next step go.
    Again,
    /// The sync ends here: the pod was killed, or a container did not start (its waiting
    /// reason is recorded, and its retry is the next sync's).
    Done,
}

/// Carries out `actions`, planned from `runtime`.
///
/// # Errors
/// The interrupt; or a failure that stops the sync: a runtime call, the sandbox, a volume.
pub(super) async fn execute(
    input: &mut SyncInput,
    setup: &PodSetup,
    runtime: &PodRuntime,
    actions: &PodActions,
    progress: &mut Progress,
) -> Result<Executed, Stopped> {
    if actions.kill_pod {
        kill_pod(input, runtime, progress).await?;
        return Ok(Executed::Done);
    }
    if !actions.reset.is_empty() {
        reset(input, runtime, &actions.reset, progress).await?;
        return Ok(Executed::Done);
    }
    let target = match (&actions.create_sandbox, &actions.sandbox_id) {
        (Some(create), _) => Some(create_sandbox(input, setup, runtime, *create, progress).await?),
        (None, Some(id)) if !actions.start.is_empty() => {
            Some(existing_sandbox(input, runtime, id)?)
        }
        _ => None,
    };
    for id in &actions.remove {
        remove(input, id, progress).await?;
    }
    for kill in &actions.kill {
        kill_one(input, runtime, kill, progress).await?;
    }
    let mut all_started = true;
    if let Some(target) = target {
        for start in &actions.start {
            all_started &= start_one(input, setup, &target, start, progress).await?;
        }
    }
    Ok(if all_started {
        Executed::Again
    } else {
        Executed::Done
    })
}

/// Stops whatever of the pod still runs — its containers, then its sandboxes — as the plan
/// asks once nothing is left to run (or it cannot run again), then frees its volumes, as
/// upstream tears a terminated pod's volumes down while its object is still there (an
/// emptyDir's space comes back now, not at deletion; logs and termination messages stay). A pod
/// already stopped, its volumes gone, costs no runtime call and one look at its directory.
async fn kill_pod(
    input: &SyncInput,
    runtime: &PodRuntime,
    progress: &mut Progress,
) -> Result<(), Stopped> {
    let ready = |s: &cri::PodSandbox| s.state == cri::PodSandboxState::SandboxReady as i32;
    if runtime.running().next().is_some() || runtime.sandboxes.iter().any(ready) {
        input.interrupt.check()?;
        tracing::info!("nothing left to run: stopping the pod");
        progress.changes = RuntimeChanges::Other;
        stop_observed(&input.port, runtime, Some(&input.pod), None).await?;
    }
    if free_pod_volumes(&input.node, uid(&input.pod)).await? {
        tracing::info!("the finished pod's volumes are torn down");
    }
    Ok(())
}

/// Resets the pod in place for a `RestartAllContainers` rule: every instance the plan lists,
/// in its order, killed at once if it has not exited (no grace period, so no preStop hook),
/// then removed; the sandbox stays. The sync ends there and the next one, due at once, starts
/// the pod afresh (as upstream's kubelet syncs the pod again straight after a reset).
async fn reset(
    input: &SyncInput,
    runtime: &PodRuntime,
    instances: &[ContainerReset],
    progress: &mut Progress,
) -> Result<(), Stopped> {
    tracing::info!("a RestartAllContainers rule resets the pod: every container is removed");
    progress.reset = true;
    input.resetting.store(true, Ordering::SeqCst);
    for instance in instances {
        if instance.kill {
            let name = &instance.name;
            let why = format!("Container {name} is killed: all containers restart");
            let stop = Stop {
                id: &instance.id,
                name,
                grace: Duration::ZERO,
                why: &why,
            };
            stop_one(input, runtime, &stop, progress).await?;
        }
        remove(input, &instance.id, progress).await?;
    }
    Ok(())
}

/// Makes the pod's new sandbox; its containers wait with `ContainerCreating` until it is up.
async fn create_sandbox(
    input: &SyncInput,
    setup: &PodSetup,
    runtime: &PodRuntime,
    create: SandboxCreate,
    progress: &mut Progress,
) -> Result<SandboxTarget, Stopped> {
    tracing::info!(
        attempt = create.attempt,
        "new sandbox: {}",
        create.reason.describe()
    );
    let creating: Vec<String> = all_containers(&input.pod)
        .map(|(c, _)| c.name.clone())
        .filter(|name| !progress.waiting.contains_key(name))
        .collect();
    for name in &creating {
        let why = Waiting {
            reason: "ContainerCreating".into(),
            message: String::new(),
        };
        progress.waiting.insert(name.clone(), why);
    }
    progress.changes = RuntimeChanges::Other;
    let target = setup
        .create_sandbox(input, &runtime.sandboxes, create.attempt)
        .await?;
    for name in &creating {
        progress.waiting.remove(name);
    }
    Ok(target)
}

/// Removes a container a start left created but not started.
async fn remove(input: &SyncInput, id: &str, progress: &mut Progress) -> Result<(), Stopped> {
    input.interrupt.check()?;
    progress.changes = RuntimeChanges::Other;
    let removed = input
        .port
        .call(cri::RemoveContainerRequest {
            container_id: id.to_owned(),
        })
        .await;
    match removed {
        Ok(_) | Err(RuntimeError::NotFound { .. }) => Ok(()),
        Err(error) => Err(error.into()),
    }
}

/// Kills one container as the plan says, its Killing event saying why.
async fn kill_one(
    input: &SyncInput,
    runtime: &PodRuntime,
    kill: &ContainerKill,
    progress: &mut Progress,
) -> Result<(), Stopped> {
    let stop = Stop {
        id: &kill.id,
        name: &kill.name,
        grace: kill.grace,
        why: &kill.message,
    };
    stop_one(input, runtime, &stop, progress).await
}

/// One container to stop: its runtime ID, its name, its grace period and what its Killing
/// event says.
struct Stop<'a> {
    id: &'a str,
    name: &'a str,
    grace: Duration,
    why: &'a str,
}

/// Stops one container within its grace period.
async fn stop_one(
    input: &SyncInput,
    runtime: &PodRuntime,
    stop: &Stop<'_>,
    progress: &mut Progress,
) -> Result<(), Stopped> {
    input.interrupt.check()?;
    tracing::info!(container = stop.name, id = stop.id, "{}", stop.why);
    progress.changes = RuntimeChanges::Other;
    let (port, pod) = (&input.port, &input.pod);
    kill_container(port, runtime, stop.id, pod, stop.grace, stop.why).await?;
    Ok(())
}

/// Starts one container in `target`, recording a restart after an exit in the back-off first.
/// Returns whether it started; one that did not waits for the reason its failure gives.
///
/// # Errors
/// The interrupt; or a runtime outage, which ends the sync (the runtime is retried soon).
async fn start_one(
    input: &mut SyncInput,
    setup: &PodSetup,
    target: &SandboxTarget,
    start: &ContainerStart,
    progress: &mut Progress,
) -> Result<bool, Stopped> {
    let Some(container) = container_named(&input.pod, &start.name).map(|(c, _)| c.into_owned())
    else {
        return Ok(true);
    };
    if let Some(restart) = &start.after_exit {
        input
            .restarts
            .restarted(&restart.key, restart.ran_for, input.restart_policy);
    }
    let request = StartRequest {
        pod: Arc::clone(&input.pod),
        container,
        kind: start.kind,
        sandbox_id: target.id.clone(),
        sandbox_config: target.config.clone(),
        restart_count: start.restart_count,
        pid_target: start.pid_target.clone(),
        pod_ips: target.pod_ips.clone(),
        objects: Arc::clone(&setup.objects),
    };
    let started = start_container(
        &input.port,
        &input.node,
        &setup.plan,
        &mut input.pulls,
        &input.interrupt,
        request,
    )
    .await;
    match started {
        Ok(container_id) => {
            progress.changes.started(target.id.clone(), container_id);
            progress.waiting.remove(&start.name);
            Ok(true)
        }
        Err(NotStarted::Interrupted(interrupted)) => {
            progress.changes = RuntimeChanges::Other;
            Err(interrupted.into())
        }
        Err(failed) => {
            progress.changes = RuntimeChanges::Other;
            if let Some(why) = failed.report(&start.name) {
                progress.waiting.insert(start.name.clone(), why);
            }
            match failed.outage() {
                Some(outage) => Err(PodError::Runtime(outage.clone()).into()),
                None => Ok(false),
            }
        }
    }
}
