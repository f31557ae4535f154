//! Log output: text or JSON on stderr or to the `--log-file` ([`crate::log_file`]), plus the
//! Event Log for a Windows service ([`crate::event_log`]), with a verbosity that can change
//! while running.

use std::io::IsTerminal;
use std::sync::Arc;

use sergeant_actors::config_watcher::{VerbosityControl, VerbosityError};
use sergeant_config::kubelet::{LogFormat, Logging};

use crate::event_log;
use crate::log_file::RotatingFile;
use tracing_subscriber::fmt::writer::BoxMakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, reload, EnvFilter, Registry};

/// sergeant's own crates, whose detail `-v` turns up before the libraries'.
const OWN_CRATES: [&str; 5] = [
    "sergeant",
    "sergeant_actors",
    "sergeant_config",
    "sergeant_messages",
    "sergeant_runtime_adapters",
];

/// The tracing filter for a kubelet-style verbosity: 0–2 info; 3–4 debug and 5–7 trace for
/// sergeant's own crates (libraries stay at info); 8 and up trace for everything.
fn filter_for(verbosity: u32) -> EnvFilter {
    let own = match verbosity {
        0..=2 => return EnvFilter::new("info"),
        3..=4 => "debug",
        5..=7 => "trace",
        _ => return EnvFilter::new("trace"),
    };
    let directives: Vec<String> = OWN_CRATES
        .iter()
        .map(|krate| format!("{krate}={own}"))
        .collect();
    EnvFilter::new(format!("info,{}", directives.join(",")))
}

/// Installs the global subscriber, writing to `file` when given and to stderr otherwise (and,
/// with `event_log`, to the Windows Event Log too), and returns the control that changes its
/// verbosity.
///
/// # Errors
/// When a global subscriber is already installed.
pub fn init(
    logging: &Logging,
    file: Option<RotatingFile>,
    event_log: bool,
) -> Result<VerbosityControl, tracing_subscriber::util::TryInitError> {
    let (filter, handle) = reload::Layer::new(filter_for(logging.verbosity));
    let registry = Registry::default()
        .with(filter)
        .with(event_log.then(event_log::layer).flatten());
    let (writer, ansi) = match file {
        Some(file) => (BoxMakeWriter::new(file), false),
        None => (
            BoxMakeWriter::new(std::io::stderr),
            std::io::stderr().is_terminal(),
        ),
    };
    match logging.format {
        LogFormat::Json => registry
            .with(fmt::layer().json().with_writer(writer))
            .try_init()?,
        LogFormat::Text => registry
            .with(fmt::layer().with_ansi(ansi).with_writer(writer))
            .try_init()?,
    }
    Ok(Arc::new(move |verbosity| {
        handle
            .reload(filter_for(verbosity))
            .map_err(|err| VerbosityError(Box::new(err)))
    }))
}
