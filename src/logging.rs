//! Log output: text or JSON on stderr, with a verbosity that can change while running.

use std::sync::Arc;

use sergeant_actors::config_watcher::VerbosityControl;
use sergeant_config::kubelet::{LogFormat, Logging};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, reload, EnvFilter, Registry};

/// The tracing filter for a kubelet-style verbosity: 0–2 info, 3–4 debug, 5 and up trace.
fn filter_for(verbosity: u32) -> EnvFilter {
    let level = match verbosity {
        0..=2 => "info",
        3..=4 => "debug",
        _ => "trace",
    };
    EnvFilter::new(level)
}

/// Installs the global subscriber and returns the control that changes its verbosity.
///
/// # Errors
/// When a global subscriber is already installed.
pub fn init(logging: &Logging) -> Result<VerbosityControl, tracing_subscriber::util::TryInitError> {
    let (filter, handle) = reload::Layer::new(filter_for(logging.verbosity));
    let registry = Registry::default().with(filter);
    match logging.format {
        LogFormat::Json => registry
            .with(fmt::layer().json().with_writer(std::io::stderr))
            .try_init()?,
        LogFormat::Text => registry
            .with(fmt::layer().with_writer(std::io::stderr))
            .try_init()?,
    }
    Ok(Arc::new(move |verbosity| {
        handle
            .reload(filter_for(verbosity))
            .map_err(|err| err.to_string())
    }))
}
