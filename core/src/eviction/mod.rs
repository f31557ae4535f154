//! Node-pressure eviction decided as the upstream kubelet's eviction manager decides it, with
//! no I/O: the eviction signals observed on the node ([`signals`]), the configured thresholds
//! ([`thresholds`]), one decision per observation ([`decide::decide`]: which thresholds are
//! met, which pressure conditions the node reports, what to reclaim), which pod goes first
//! ([`rank::rank`]), and the words upstream uses for an evicted or refused pod ([`message`]).
//!
//! Entry point: [`decide::decide`]; the eviction manager actor feeds it a sample of the
//! node's stats and carries out what it returns.

pub mod decide;
pub mod message;
pub mod rank;
pub mod signals;
pub mod thresholds;

#[cfg(test)]
mod tests;
