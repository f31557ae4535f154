//! Keeping the agent's memory small: glibc's allocator gives every thread that allocates its
//! own arena (up to eight per core), and the arenas' free pages stay resident. A node agent
//! with one event loop and a few short blocking tasks gains nothing from more than one.

/// Arenas the allocator may use.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const ARENAS: libc::c_int = 1;

/// Caps glibc's malloc arenas; elsewhere (musl, Windows) there is nothing to do.
pub fn limit_allocator_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; called once, before any thread starts.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, ARENAS);
    }
}
