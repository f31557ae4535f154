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

/// How often freed heap memory is handed back to the kernel.
pub const TRIM_PERIOD: std::time::Duration = std::time::Duration::from_secs(10);

/// Hands the heap's free pages back to the kernel every [`TRIM_PERIOD`], for ever. glibc keeps
/// what a burst freed (110 pod starts, a large API list) resident until the top of the heap
/// is free, which it rarely is; the walk takes well under a millisecond at this heap's size.
/// Elsewhere (musl, Windows) the allocator returns memory itself, and this only waits.
pub async fn trim_freed_memory() {
    let mut ticks = tokio::time::interval(TRIM_PERIOD);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: malloc_trim only releases free pages of the allocator's own heap.
        unsafe {
            libc::malloc_trim(0);
        }
    }
}
