//! The vocabulary of the node's stats: the Summary API's types ([`summary`]), which the host
//! reads into and the HTTP server answers with, the runtime listings they start from
//! ([`listing`]), and what a Windows node's stats are made of besides the host's numbers
//! ([`windows`]: the runtime's pod stats, the system containers).

pub mod listing;
pub mod summary;
pub mod windows;
