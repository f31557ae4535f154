//! The Winsock error codes of a resource that ran out: sockets of the process, buffers.

/// `WSAEMFILE` (10024), `WSAENOBUFS` (10055).
pub(super) const EXHAUSTED: [i32; 2] = [10024, 10055];
