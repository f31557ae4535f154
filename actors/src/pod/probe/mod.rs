//! Probes: liveness, readiness and startup checks of a container. [`ProbeSet`] is what the pod
//! actor holds — one supervised [`ProbeWorker`] actor per probe of each running container,
//! restarted by the pod's probe supervisor when it panics or fails — and [`check`] runs one
//! attempt of any handler (exec here; httpGet, tcpSocket and grpc through `sergeant_probes`).

mod check;
mod metrics;
mod set;
mod worker;

pub use check::{check, ProbeTarget};
pub use sergeant_core::probe::{ProbeKind, ProbeSettings};
pub use sergeant_probes::Outcome;
pub use set::{ProbeDeps, ProbeSet};
pub use worker::{ProbeJob, ProbeResult, ProbeWorker, ProbedContainer};
