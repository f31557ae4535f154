//! The Event Log layer: warnings and errors, and the service's state changes, written to the
//! Application log under the source `sergeant` (`RegisterEventSourceW` / `ReportEventW`), and
//! why the service could not start ([`report_error`]). No message file is registered, so Event
//! Viewer shows each event's text as its only insertion string.

use std::fmt::{self, Write as _};
use std::ptr;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::Layer;
use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::System::EventLog::{
    DeregisterEventSource, RegisterEventSourceW, ReportEventW, EVENTLOG_ERROR_TYPE,
    EVENTLOG_INFORMATION_TYPE, EVENTLOG_WARNING_TYPE, REPORT_EVENT_TYPE,
};

/// The event source the entries are written under.
const SOURCE: &str = "sergeant";
/// The event id of every entry (there is no message file to give ids a meaning).
const EVENT_ID: u32 = 1;
/// Information events are written only from the service's own module (its state changes).
const SERVICE_TARGET: &str = "sergeant::service";
/// The longest text written in one entry (the Event Log takes at most 31 839 characters).
const MAX_CHARS: usize = 30_000;

/// The layer writing to the Event Log; `None` (with the reason on stderr) when no event source
/// can be registered.
pub fn layer<S: Subscriber>() -> Option<Box<dyn Layer<S> + Send + Sync>> {
    let source = Source::register()?;
    Some(Box::new(EventLog { source }))
}

/// Writes `message` to the Event Log as an error (why the service could not start).
pub fn report_error(message: &str) {
    if let Some(source) = Source::register() {
        source.report(EVENTLOG_ERROR_TYPE, message);
    }
}

/// A registered event source.
struct Source(HANDLE);

impl Source {
    /// Registers [`SOURCE`] on this machine; `None`, with the reason on stderr, when refused.
    fn register() -> Option<Self> {
        let name = wide(SOURCE);
        // SAFETY: a null server name (this machine) and a NUL-terminated UTF-16 source name that
        // outlives the call.
        let handle = unsafe { RegisterEventSourceW(ptr::null(), name.as_ptr()) };
        if handle.is_null() {
            eprintln!(
                "sergeant: cannot register the Event Log source {SOURCE}: {}",
                std::io::Error::last_os_error()
            );
            return None;
        }
        Some(Self(handle))
    }

    /// Writes one entry of `kind` holding `text` (cut to [`MAX_CHARS`]). A failed write has
    /// nowhere better to go: it is dropped.
    fn report(&self, kind: REPORT_EVENT_TYPE, text: &str) {
        let line: String = text.chars().take(MAX_CHARS).collect();
        let line = wide(&line);
        let strings = [line.as_ptr()];
        // SAFETY: a registered source, one NUL-terminated UTF-16 string that outlives the call,
        // no user SID and no raw data.
        unsafe {
            ReportEventW(
                self.0,
                kind,
                0,
                EVENT_ID,
                ptr::null_mut(),
                1,
                0,
                strings.as_ptr(),
                ptr::null(),
            );
        }
    }
}

// SAFETY: an event source handle may be used by any thread; ReportEventW serializes writes.
unsafe impl Send for Source {}
// SAFETY: as above; the handle is only read.
unsafe impl Sync for Source {}

impl Drop for Source {
    fn drop(&mut self) {
        // SAFETY: the handle came from RegisterEventSourceW and is released once, here.
        unsafe { DeregisterEventSource(self.0) };
    }
}

/// Writes the events it selects to the Event Log.
struct EventLog {
    source: Source,
}

impl<S: Subscriber> Layer<S> for EventLog {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let metadata = event.metadata();
        let kind = match *metadata.level() {
            Level::ERROR => EVENTLOG_ERROR_TYPE,
            Level::WARN => EVENTLOG_WARNING_TYPE,
            Level::INFO if metadata.target().starts_with(SERVICE_TARGET) => {
                EVENTLOG_INFORMATION_TYPE
            }
            _ => return,
        };
        let mut text = Text(String::new());
        event.record(&mut text);
        self.source
            .report(kind, &format!("{}: {}", metadata.target(), text.0));
    }
}

/// An event as one line: its message, then its other fields as `name=value`.
struct Text(String);

impl Visit for Text {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let _ = if field.name() == "message" {
            write!(self.0, "{value:?}")
        } else {
            write!(self.0, " {}={value:?}", field.name())
        };
    }
}

/// `text` as NUL-terminated UTF-16.
fn wide(text: &str) -> Vec<u16> {
    text.encode_utf16().chain(std::iter::once(0)).collect()
}
