//! The `cni-adapter` of the runtime supervisor: network readiness from the CNI configuration
//! the runtime loads, beside the runtime's own `NetworkReady`. Every few seconds (and at once
//! at start) it finds the configuration directory (`--cni-conf-dir`, else the one the runtime
//! names in its verbose status, [`locate`]), reads the file the runtime loads on the blocking
//! pool and judges it as this platform's check says ([`check`]), and publishes the verdict on
//! a watch feed that the node status reads for the `Ready` condition. With no directory known
//! it publishes no verdict and says so on `/debug/supervision`.
//!
//! Entry point: [`child_spec`].

mod actor;
mod check;
mod locate;

#[cfg(windows)]
#[path = "platform_windows.rs"]
mod platform;
#[cfg(not(windows))]
#[path = "platform_linux.rs"]
mod platform;

use sergeant_core::cni::NetworkReadiness;
use sergeant_supervisor::{ChildSpec, Slot};
use tokio::sync::watch;

use crate::config_feed::ConfigState;
use crate::runtime::RuntimePort;

/// The CNI verdict feed: `None` while no check has been made (no directory known, or not yet
/// looked at), else whether the loaded configuration is usable.
pub type CniFeed = watch::Sender<Option<NetworkReadiness>>;

/// The `cni-adapter` worker: asks the runtime through `port`, reads `--cni-conf-dir` from
/// `config`, publishes on `verdict`.
#[must_use]
pub fn child_spec(
    port: RuntimePort,
    config: watch::Receiver<ConfigState>,
    verdict: CniFeed,
) -> ChildSpec {
    const NAME: &str = "cni-adapter";
    ChildSpec::worker(NAME, &Slot::new(NAME), move |env| {
        actor::CniAdapter::new(env, port.clone(), config.clone(), verdict.clone())
    })
}
