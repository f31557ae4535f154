//! How the pod actor reports its pod's status ([`PodWorker::report`]): from each look at the
//! runtime — a sync's last, the one a sync begins with, one taken while a long sync runs —
//! never going back to an older look than the last reported, so `/pods` never shows for long
//! a container the runtime no longer runs.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use actix::{ActorFutureExt, AsyncContext, Context, WrapFuture};
use sergeant_messages::pods::core::{Pod, PodStatus};

use super::PodWorker;
use crate::pod::look::Look;
use crate::pod::observe::refresh;
use crate::pod::probe::ProbeKind;
use crate::pod::report;
use sergeant_core::runtime::PodRuntime;
use sergeant_core::status::{api_time, Knowledge};
use sergeant_host::termination::read_messages;
use sergeant_messages::pods::PodReport;

impl PodWorker {
    /// Something changed while a sync or a stop is under way, which may take long (a pull, a
    /// hook, many containers to start or stop): the containers of the last report are looked
    /// at again now and the status reported, so it never shows for long a container the
    /// runtime no longer runs. One such look at a time; a container the running sync starts
    /// is reported when it ends.
    pub(super) fn look_meanwhile(&mut self, ctx: &mut Context<Self>) {
        let (Some(pod), Some(reported)) = (self.pod.clone(), self.reported.as_ref()) else {
            return;
        };
        if self.looking {
            return;
        }
        self.looking = true;
        let port = self.deps.port.clone();
        let known = reported.runtime.clone();
        let begun = Instant::now();
        let look = async move { refresh(&port, known, Vec::new()).await };
        ctx.spawn(look.into_actor(self).map(move |look, act, _| {
            act.looking = false;
            match look {
                Ok(runtime) => act.report_runtime(&pod, runtime, begun),
                Err(error) => tracing::debug!(pod = %act.key, "no look meanwhile: {error}"),
            }
        }));
    }

    /// Reports a look begun at `begun` outside a sync's end (before it acts, or while it
    /// runs): why containers wait is as the last report had it.
    pub(super) fn report_runtime(&mut self, pod: &Pod, runtime: PodRuntime, begun: Instant) {
        let waiting = self
            .reported
            .as_ref()
            .map(|last| last.waiting.clone())
            .unwrap_or_default();
        let look = Look {
            // Small files, read on this thread (see `file_work`).
            termination_messages: read_messages(&runtime),
            runtime,
            begun,
            waiting,
        };
        self.report(pod, look);
    }

    /// Computes the pod's status from `look` and reports it to the pod manager, unless a
    /// newer look was reported already.
    pub(super) fn report(&mut self, pod: &Pod, look: Look) {
        if !look.supersedes(self.reported.as_ref()) {
            return;
        }
        let known = Knowledge {
            waiting: look.waiting.clone(),
            termination_messages: look.termination_messages.clone(),
            start_time: Some(api_time(self.first_seen)),
            failure: self.failure.clone(),
            ready: self.probes.verdicts(ProbeKind::Readiness),
            started: self.probes.verdicts(ProbeKind::Startup),
            terminating: self.terminating.is_some(),
            resetting: self.resetting.load(Ordering::SeqCst),
            restart_gates: self.restart_gates(),
            resize_error: self.resize_error.clone(),
            resize_pending: self.resize_pending.clone(),
            without_pod_level_resources: !self
                .deps
                .config
                .borrow()
                .active
                .kubelet
                .feature_enabled("InPlacePodLevelResourcesVerticalScaling"),
            ..Knowledge::default()
        };
        let reported = report::status(
            pod,
            self.last_status.as_ref(),
            &look.runtime,
            &self.deps.node,
            known,
        );
        self.reported = Some(look);
        self.last_status = reported.status.clone();
        self.record_start(reported.status.as_ref());
        let report = PodReport {
            key: self.key.clone(),
            pod: Arc::new(reported),
        };
        if let Err(error) = self.deps.reports.tell(report) {
            // The next sync reports again.
            tracing::debug!(pod = %self.key, "status not reported: {error}");
        }
    }

    /// Records `kubelet_pod_start_duration_seconds` (first seen → every app container running)
    /// the first time the pod gets there, and `sergeant_pod_start_overhead_seconds`: that time
    /// less what the runtime calls took.
    fn record_start(&mut self, status: Option<&PodStatus>) {
        let all_running = status
            .and_then(|s| s.container_statuses.as_ref())
            .is_some_and(|all| {
                !all.is_empty()
                    && all
                        .iter()
                        .all(|c| c.state.as_ref().is_some_and(|s| s.running.is_some()))
            });
        if all_running && !self.start_recorded {
            self.start_recorded = true;
            let took = self.first_seen.elapsed().unwrap_or_default();
            metrics::histogram!("kubelet_pod_start_duration_seconds").record(took.as_secs_f64());
            let own = took.saturating_sub(self.runtime_time);
            metrics::histogram!("sergeant_pod_start_overhead_seconds").record(own.as_secs_f64());
        }
    }
}
