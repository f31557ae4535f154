//! No Event Log off Windows.

use tracing::Subscriber;
use tracing_subscriber::Layer;

/// Always `None`: only Windows has an Event Log (and only its service build asks for one).
pub fn layer<S: Subscriber>() -> Option<Box<dyn Layer<S> + Send + Sync>> {
    None
}

/// Nothing: only Windows has an Event Log (and only its service reports to it).
pub fn report_error(_message: &str) {}
