//! [`is_exhausted`]: whether an accept error says a resource ran out for a while (descriptors,
//! buffers, memory), in the error numbers of the platform: errno on unix
//! (`exhausted_unix.rs`), Winsock codes on Windows (`exhausted_windows.rs`).

#[cfg(unix)]
#[path = "exhausted_unix.rs"]
mod platform;
#[cfg(windows)]
#[path = "exhausted_windows.rs"]
mod platform;

/// Whether `err` is a resource that ran out and may come back: the listener pauses on it
/// rather than failing.
pub(crate) fn is_exhausted(err: &std::io::Error) -> bool {
    err.raw_os_error()
        .is_some_and(|code| platform::EXHAUSTED.contains(&code))
}
