//! The stats of a Windows node that are not read from the host's files: what a Windows runtime
//! says of its pods and containers (the Windows half of CRI's `ListPodSandboxStats`,
//! translated in [`pods`]), and the system containers upstream's Windows kubelet lists
//! ([`system`]: the commit charge of the whole machine, which the `memory.available` eviction
//! signal is taken from on Windows, and the sum of the pods, as there are no cgroups). Pure,
//! so it is tested on Linux; the stats provider fetches, the summary and the eviction manager
//! read through here.
//!
//! Entry points: [`pods::by_sandbox`], [`system::commit_memory`], [`system::pods`].

pub mod pods;
pub mod system;

#[cfg(test)]
mod tests;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

/// A CRI timestamp (nanoseconds since the Unix epoch) as an API time; `now_ns` when the
/// runtime left it out (0 or less) or it is out of range.
fn cri_time(nanos: i64, now_ns: i64) -> Time {
    let at = if nanos > 0 { nanos } else { now_ns };
    Time(Timestamp::from_nanosecond(i128::from(at)).unwrap_or(Timestamp::UNIX_EPOCH))
}
